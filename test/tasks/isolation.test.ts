/**
 * What one caller cannot do to another, on JSON-RPC, HTTP+JSON and gRPC
 * through the official @a2a-js/sdk clients (a bare HTTP/2 stream for the
 * gRPC subscriber that must not read, which grpc-js cannot be):
 *
 * 9. Principals and tenants (spec 13.1): a task is seen only by the owner
 *    and tenant that made it; to anyone else it is TaskNotFound on every
 *    method, exactly as one that does not exist.
 * 10. A subscriber that never reads: it neither stalls the task nor makes
 *    the agent hold every event for it; the subscribers that read get all.
 */
import { jest } from "@jest/globals";
import { TaskState as S } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { TaskState } from "../../generated/a2a_pb.js";
import {
  BINDINGS,
  PRINCIPALS,
  Receiver,
  Scripts,
  asTask,
  chunk,
  collect,
  deferred,
  errorKind,
  failure,
  follow,
  label,
  listParams,
  messageOf,
  pushConfig,
  jsonRpcCodeOf,
  sdkClassOf,
  send,
  stalledGrpcSubscriber,
  type Drained,
  startAgent,
  textOfParts,
  until,
  within,
  type BindingName,
  type TestAgent,
} from "../support/task-clients.js";

// Real sockets on a busy two-core machine: more than jest's 5 s default, never a wait of its own.
jest.setTimeout(30_000);

const scripts = new Scripts();
let agent: TestAgent;
let slow: TestAgent;
let receiver: Receiver;

const HIGH_WATER = 8;
// A reading subscriber in this same (busy) process must never look slow: a second is long for it, short for the test.
const SLOW_MS = 1000;

beforeAll(async () => {
  receiver = await new Receiver().start();
  agent = await startAgent(scripts.executor, { push: { allow: ["127.0.0.0/8"], backoffMs: 20 } });
  slow = await startAgent(scripts.executor, { subscriberHighWater: HIGH_WATER, slowSubscriberMs: SLOW_MS });
});

afterAll(async () => {
  await agent?.close();
  await slow?.close();
  await receiver?.stop();
});

const quick = scripts.add("quick", async function* () {
  yield { state: TaskState.WORKING };
});
const never = scripts.add("never", async function* () {
  throw new Error("another owner's message must not reach the executor");
});

/** The error `call` fails with (fails the test when it succeeds). */
async function caught(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error("expected an error");
}

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  describe("9. isolation", () => {
    let alice: Client;
    let bob: Client;
    let anonymous: Client;

    beforeAll(async () => {
      alice = await agent.client(binding, "alice");
      bob = await agent.client(binding, "bob");
      anonymous = await agent.client(binding);
    });

    test("bob (and an anonymous caller) get TaskNotFound for every method on alice's task, and ListTasks shows them none of hers", async () => {
      const gate = deferred();
      const key = scripts.add("alices", async function* () {
        yield { state: TaskState.WORKING, message: "for alice" };
        await gate.promise;
      });
      const task = asTask(await alice.sendMessage(send(key, { returnImmediately: true })));
      const hook = await alice.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(`/alice/${binding}`), id: "alice-hook", scheme: "Bearer", credentials: "alice-secret" }));
      try {
        for (const [who, other] of [
          ["bob", bob],
          ["anonymous", anonymous],
        ] as const) {
          const calls: Record<string, () => Promise<unknown>> = {
            GetTask: () => other.getTask({ tenant: "", id: task.id }),
            CancelTask: () => other.cancelTask({ tenant: "", id: task.id, metadata: undefined }),
            SubscribeToTask: () => collect(other.resubscribeTask({ tenant: "", id: task.id })),
            "SendMessage with the taskId": () => other.sendMessage(send(never, { taskId: task.id })),
            "SendStreamingMessage with the taskId": () => collect(other.sendMessageStream(send(never, { taskId: task.id }))),
            CreateTaskPushNotificationConfig: () => other.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(`/intruder/${binding}`) })),
            GetTaskPushNotificationConfig: () => other.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: hook.id }),
            ListTaskPushNotificationConfigs: () => other.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" }),
            DeleteTaskPushNotificationConfig: () => other.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: hook.id }),
          };
          const outcomes: Record<string, string> = {};
          for (const [method, call] of Object.entries(calls)) outcomes[method] = await failure(binding, call);
          expect({ who, outcomes }).toEqual({ who, outcomes: Object.fromEntries(Object.keys(calls).map((m) => [m, "TaskNotFound"])) });

          // Told exactly what a task that does not exist is told.
          const missing = `missing-${binding}`;
          const [theirs, nobodys] = [await caught(calls.GetTask!), await caught(() => other.getTask({ tenant: "", id: missing }))];
          expect(messageOf(theirs).replace(task.id, "<id>")).toBe(messageOf(nobodys).replace(missing, "<id>"));

          const listed = await other.listTasks(listParams({ pageSize: 100 }));
          expect(listed.tasks.map((t) => t.id)).not.toContain(task.id);
          expect(await other.listTasks(listParams({ contextId: task.contextId }))).toMatchObject({ tasks: [], totalSize: 0 });
        }

        // None of it touched alice's task.
        const mine = await alice.getTask({ tenant: "", id: task.id });
        expect(mine.status?.state).toBe(S.TASK_STATE_WORKING);
        expect(mine.history.map((m) => textOfParts(m.parts))).toEqual([key, "for alice"]);
        const configs = await alice.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
        expect(configs.configs.map((c) => c.id)).toEqual(["alice-hook"]);
        expect((await alice.listTasks(listParams({ contextId: task.contextId }))).tasks.map((t) => t.id)).toEqual([task.id]);
        expect(scripts.contexts(never)).toEqual([]);
        expect(receiver.on(`/intruder/${binding}`)).toEqual([]);
      } finally {
        gate.resolve();
      }
      await until("alice's task to complete", async () => (await alice.getTask({ tenant: "", id: task.id })).status?.state === S.TASK_STATE_COMPLETED);
    });

    test("the same task under another tenant is TaskNotFound too, on every method; ListTasks is per tenant", async () => {
      const gate = deferred();
      const key = scripts.add("tenant-task", async function* () {
        yield { state: TaskState.WORKING };
        await gate.promise;
      });
      const acme = `acme-${binding.toLowerCase().replace(/\W/g, "")}`;
      const task = asTask(await alice.sendMessage(send(key, { tenant: acme, returnImmediately: true })));
      const plain = asTask(await alice.sendMessage(send(quick)));
      try {
        expect((await alice.getTask({ tenant: acme, id: task.id })).status?.state).toBe(S.TASK_STATE_WORKING);
        await alice.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(`/tenant/${binding}`), id: "tenant-hook" }, acme));

        for (const tenant of ["", "globex"]) {
          const calls: Record<string, () => Promise<unknown>> = {
            GetTask: () => alice.getTask({ tenant, id: task.id }),
            CancelTask: () => alice.cancelTask({ tenant, id: task.id, metadata: undefined }),
            SubscribeToTask: () => collect(alice.resubscribeTask({ tenant, id: task.id })),
            "SendMessage with the taskId": () => alice.sendMessage(send(never, { tenant, taskId: task.id })),
            CreateTaskPushNotificationConfig: () => alice.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(`/wrong-tenant/${binding}`) }, tenant)),
            GetTaskPushNotificationConfig: () => alice.getTaskPushNotificationConfig({ tenant, taskId: task.id, id: "tenant-hook" }),
            ListTaskPushNotificationConfigs: () => alice.listTaskPushNotificationConfig({ tenant, taskId: task.id, pageSize: 0, pageToken: "" }),
            DeleteTaskPushNotificationConfig: () => alice.deleteTaskPushNotificationConfig({ tenant, taskId: task.id, id: "tenant-hook" }),
          };
          const outcomes: Record<string, string> = {};
          for (const [method, call] of Object.entries(calls)) outcomes[method] = await failure(binding, call);
          expect({ tenant, outcomes }).toEqual({ tenant, outcomes: Object.fromEntries(Object.keys(calls).map((m) => [m, "TaskNotFound"])) });
        }
        // The task of the default tenant is not seen from acme either, and bob sees nothing of alice's under acme.
        expect(await failure(binding, () => alice.getTask({ tenant: acme, id: plain.id }))).toBe("TaskNotFound");
        expect(await failure(binding, () => bob.getTask({ tenant: acme, id: task.id }))).toBe("TaskNotFound");

        const inAcme = (await alice.listTasks(listParams({ tenant: acme, pageSize: 100 }))).tasks.map((t) => t.id);
        expect(inAcme).toContain(task.id);
        expect(inAcme).not.toContain(plain.id);
        const inDefault = (await alice.listTasks(listParams({ pageSize: 100 }))).tasks.map((t) => t.id);
        expect(inDefault).toContain(plain.id);
        expect(inDefault).not.toContain(task.id);
        expect((await bob.listTasks(listParams({ tenant: acme, pageSize: 100 }))).tasks).toEqual([]);

        const configs = await alice.listTaskPushNotificationConfig({ tenant: acme, taskId: task.id, pageSize: 0, pageToken: "" });
        expect(configs.configs.map((c) => [c.id, c.tenant])).toEqual([["tenant-hook", acme]]);
        expect((await alice.getTask({ tenant: acme, id: task.id })).status?.state).toBe(S.TASK_STATE_WORKING);
      } finally {
        gate.resolve();
      }
      await until("the tenant's task to complete", async () => (await alice.getTask({ tenant: acme, id: task.id })).status?.state === S.TASK_STATE_COMPLETED);
    });

    test("a wrong bearer token is Unauthenticated before anything is looked up", async () => {
      const task = asTask(await alice.sendMessage(send(quick)));
      const wrong = { serviceParameters: { authorization: "Bearer not-a-token" } };
      expect(await failure(binding, () => anonymous.getTask({ tenant: "", id: task.id }, wrong))).toBe("Unauthenticated");
      expect(await failure(binding, () => anonymous.getTask({ tenant: "", id: `missing-${binding}` }, wrong))).toBe("Unauthenticated");
      // The right token is alice, whoever's client sends it.
      const asAlice = { serviceParameters: { authorization: `Bearer ${PRINCIPALS.alice}` } };
      expect((await anonymous.getTask({ tenant: "", id: task.id }, asAlice)).id).toBe(task.id);
    });
  });

  describe("10. a subscriber that never reads", () => {
    /** Events the executor emits: together far more than socket buffers and flow-control windows hold. */
    const EVENTS = 300;
    const PAYLOAD = 32 * 1024;
    /** What the stalled subscriber of the first test had been sent, for the second. */
    let cut: Drained | undefined;

    /**
     * A subscriber that reads its first event (the snapshot) and then no
     * more until told to drain. Over SSE an SDK stream that is simply not
     * pulled (its fetch body is read only as it is pulled, so the socket
     * backs up); over gRPC the SDK's grpc-js client would go on reading
     * into its own queue, so a bare HTTP/2 stream stands in for it.
     */
    async function stalled(server: TestAgent, client: Client, taskId: string) {
      if (binding === "GRPC") {
        const raw = stalledGrpcSubscriber(server.server, taskId);
        await within("the stalled subscriber to be answered", raw.opened);
        return raw;
      }
      const it = client.resubscribeTask({ tenant: "", id: taskId })[Symbol.asyncIterator]();
      const first = await within("the stalled subscriber's snapshot", it.next());
      expect(first.done !== true && label(first.value)).toBe("task:WORKING");
      return {
        drain: async (ms: number): Promise<Drained> => {
          let chunks = 0;
          let completed = false;
          let how = "end";
          let code: number | undefined;
          const reading = (async () => {
            try {
              for (let r = await it.next(); r.done !== true; r = await it.next()) {
                if (r.value.payload?.$case === "artifactUpdate") chunks++;
                if (label(r.value) === "status:COMPLETED") completed = true;
              }
            } catch (err) {
              // The error the stream was cut with, as the SDK understood it.
              code = jsonRpcCodeOf(err);
              how = `${errorKind(binding, err)} (${sdkClassOf(err)}): ${messageOf(err)}`;
            }
          })();
          const ended = await within("the stalled stream to end", reading, ms).then(
            () => true,
            () => false,
          );
          return { chunks, completed, ended, how, code };
        },
      };
    }

    test(`neither stalls the task nor is held every event: the task completes, the reading subscriber gets all ${EVENTS}`, async () => {
      const gate = deferred();
      const key = scripts.add("flood", async function* () {
        yield { state: TaskState.WORKING };
        await gate.promise;
        for (let i = 0; i < EVENTS; i++) {
          yield chunk(`${String(i).padStart(4, "0")}:${"x".repeat(PAYLOAD)}`, "flood", { append: i > 0, last: i === EVENTS - 1 });
        }
      });
      const client = await slow.client(binding);
      const contextId = `ctx-flood-${binding}`;
      const task = asTask(await client.sendMessage(send(key, { contextId, returnImmediately: true })));
      expect(task.status?.state).toBe(S.TASK_STATE_WORKING);

      const idle = await stalled(slow, await slow.newClient(binding), task.id);
      const reader = follow(binding, (await slow.newClient(binding)).resubscribeTask({ tenant: "", id: task.id }));
      await within("the reader's snapshot", reader.atLeast(1));

      gate.resolve();
      // The stalled subscriber still has not read: the task completes all the same (it waited for it one grace time).
      // Listed without artifacts: the whole artifact is more than a gRPC message may be.
      await until(
        "the task to complete",
        async () => (await client.listTasks(listParams({ contextId, historyLength: 0 }))).tasks[0]?.status?.state === S.TASK_STATE_COMPLETED,
        20_000,
      );
      expect(await within("the reader to end", reader.done, 20_000)).toBe("ended");

      // The reader got every event, in order.
      expect(label(reader.events[0]!)).toBe("task:WORKING");
      expect(label(reader.events.at(-1)!)).toBe("status:COMPLETED");
      const chunks = reader.events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [textOfParts(e.payload.value.artifact?.parts).slice(0, 4)] : []));
      expect(chunks).toEqual(Array.from({ length: EVENTS }, (_, i) => String(i).padStart(4, "0")));

      // Now read what the stalled subscriber had been sent: what the sockets
      // (and HTTP/2 windows) held, then the error it was cut with; not every
      // event, and not the end of the task, which the agent did not keep for it.
      const received = await idle.drain(10_000);
      cut = received;
      expect(received.ended).toBe(true);
      expect(received.chunks).toBeLessThan(EVENTS);
      expect(received.completed).toBe(false);
      expect(received.how).not.toBe("end");
    });

    test("the stream it had was cut with RESOURCE_EXHAUSTED, which the client can tell from the A2A errors", () => {
      // From the test before (one flood per binding is enough).
      expect(cut).toBeDefined();
      const { how, code } = cut!;
      if (binding === "GRPC") expect(how).toBe("grpc RESOURCE_EXHAUSTED");
      // The SDK reads an error event of an HTTP+JSON stream as a plain A2AError (the spec leaves its shape open).
      if (binding === "HTTP+JSON") expect(how).toMatch(/^http 200 \(A2AError\): .*stayed \d+ events behind/);
      if (binding === "JSONRPC") {
        // -32001 to -32099 are A2A's own errors (spec 5.4, 9.5): a cut stream is none of them. The SDK
        // takes -32008 for ExtensionSupportRequired, which would send a client looking for an extension.
        const a2aSpecific = code !== undefined && code <= -32001 && code >= -32099;
        expect({ code, a2aSpecific, how }).toEqual({ code, a2aSpecific: false, how });
      }
    });
  });
});
