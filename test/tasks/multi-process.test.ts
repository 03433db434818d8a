/**
 * Agent instances as separate processes (test/support/store-agent.ts,
 * forked, each serving all three bindings on its own ports), sharing a task
 * store through its URL (D73):
 * - two instances on one Postgres (test/support/postgres.ts): a streaming
 *   task started on A is followed, canceled (A's executor stops) and listed
 *   through B, on each binding (D71);
 * - a message through B to a task whose run on A has not set a state yet
 *   waits for that run, then runs after the question A asked, on each binding
 *   (D79, across processes: each learns of the other through Postgres);
 * - an instance killed with SIGKILL mid-task: B moves the task to FAILED
 *   within the lease (D72), and every push notification of the task, none of
 *   which the killed one could deliver, reaches the loopback receiver (D74);
 * - an instance killed with a waiting task's notifications undelivered, the
 *   task taken up by a run on B at once: B delivers them while its run still
 *   holds the task, each once (D74);
 * - a PGlite agent killed with SIGKILL and started again on its data
 *   directory: its tasks are there, the one it was running FAILED.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { jest } from "@jest/globals";
import { Role, TaskState as S } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { projectRoot } from "../support/protos.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { BINDINGS, Receiver, asTask, clientAt, follow, grpcClientOf, label, listParams, send, textOfParts, until, within, type BindingName } from "../support/task-clients.js";

jest.setTimeout(60_000);

interface AgentProcess {
  readonly child: ChildProcess;
  readonly origin: string;
  client(binding: BindingName): Promise<Client>;
  /** The next IPC message matching `check`. */
  next<T>(what: string, check: (m: Record<string, unknown>) => boolean): Promise<T>;
  go(key: string): void;
  kill(): Promise<void>;
  close(): Promise<void>;
}

const loader = pathToFileURL(join(projectRoot, "test/support/ts-loader.mjs")).href;
const running: AgentProcess[] = [];

async function startAgentProcess(store: string, leaseMs = 30_000): Promise<AgentProcess> {
  const child = fork(join(projectRoot, "test/support/store-agent.ts"), [], {
    execArgv: ["--import", loader],
    env: { ...process.env, A2A_STORE: store, LEASE_MS: String(leaseMs) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const messages: Record<string, unknown>[] = [];
  let waiters: { check: (m: Record<string, unknown>) => boolean; wake: (m: Record<string, unknown>) => void }[] = [];
  child.on("message", (m) => {
    const message = m as Record<string, unknown>;
    messages.push(message);
    waiters = waiters.filter((w) => (w.check(message) ? (w.wake(message), false) : true));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const next = <T>(what: string, check: (m: Record<string, unknown>) => boolean): Promise<T> => {
    const seen = messages.find(check);
    if (seen !== undefined) return Promise.resolve(seen as T);
    return within(what, new Promise<T>((wake) => waiters.push({ check, wake: (m) => wake(m as T) })), 30_000);
  };
  const { origin } = await Promise.race([
    next<{ origin: string }>("the agent process listening", (m) => typeof m.origin === "string"),
    exited.then(() => Promise.reject(new Error(`the agent process on ${store} exited before listening`))),
  ]);
  const clients = new Map<BindingName, Promise<Client>>();
  const closeClients = async () => {
    for (const c of clients.values()) grpcClientOf(await c)?.close();
    clients.clear();
  };
  const agent: AgentProcess = {
    child,
    origin,
    client(binding) {
      let client = clients.get(binding);
      if (client === undefined) clients.set(binding, (client = clientAt(origin, binding)));
      return client;
    },
    next,
    go: (key) => child.send({ go: key }),
    async kill() {
      await closeClients();
      child.kill("SIGKILL");
      await exited;
    },
    async close() {
      await closeClients();
      if (child.exitCode === null && child.signalCode === null) {
        child.send("close");
        await within("the agent process to exit", exited, 10_000);
      }
    },
  };
  running.push(agent);
  return agent;
}

afterAll(async () => {
  for (const agent of running) await agent.close().catch(() => agent.child.kill("SIGKILL"));
});

describe("two agent processes on one Postgres", () => {
  let postgres: TestPostgres;
  let a: AgentProcess;
  let b: AgentProcess;
  const leaseMs = 1500;

  beforeAll(async () => {
    postgres = await startPostgres();
    // One first: it applies the migrations the other finds done.
    a = await startAgentProcess(postgres.url, leaseMs);
    b = await startAgentProcess(postgres.url, leaseMs);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await postgres?.stop();
  });

  test.each(BINDINGS)("%s: a streaming task started on A is followed, canceled and listed through B; A's executor stops", async (binding) => {
    const key = `stream-${binding}`;
    const contextId = `ctx-${binding}-${Date.now()}`;
    const [clientA, clientB] = await Promise.all([a.client(binding), b.client(binding)]);
    const origin = follow(binding, clientA.sendMessageStream(send(`chunks:${key}`, { contextId })));
    await within("A's stream to start", origin.atLeast(2));
    const id = asTask(origin.events[0]!.payload!.value).id;

    const onB = follow(binding, clientB.resubscribeTask({ tenant: "", id }));
    await within("B's snapshot", onB.atLeast(1));
    a.go(key);
    await within("B to get the chunks", onB.atLeast(3));
    const aborted = a.next("A's executor to be aborted", (m) => m.aborted === key);
    expect((await clientB.cancelTask({ tenant: "", id, metadata: undefined })).status?.state).toBe(S.TASK_STATE_CANCELED);
    await aborted;
    expect(await within("both streams to end", Promise.all([origin.done, onB.done]))).toEqual(["ended", "ended"]);
    expect(origin.events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:out:a", "artifact:out:b+", "status:CANCELED"]);
    expect(onB.events.map(label)).toEqual(["task:WORKING", "artifact:out:a", "artifact:out:b+", "status:CANCELED"]);
    const listed = await clientB.listTasks(listParams({ contextId }));
    expect(listed.tasks.map((t) => [t.id, t.status?.state])).toEqual([[id, S.TASK_STATE_CANCELED]]);
  });

  test.each(BINDINGS)("%s: a message through B waits for A's run to set a state, then B runs it after A's question (D79)", async (binding) => {
    const key = `hold-${binding}`;
    const contextId = `ctx-hold-${binding}-${Date.now()}`;
    const [clientA, clientB] = await Promise.all([a.client(binding), b.client(binding)]);
    const onA = follow(binding, clientA.sendMessageStream(send(`hold:${key}`, { contextId })));
    await within("A's run to be WORKING", onA.atLeast(2));
    const id = asTask(onA.events[0]!.payload!.value).id;
    expect((await a.next<{ taskId: string }>("A's run", (m) => m.started === key)).taskId).toBe(id);

    let answered = false;
    const answer = clientB.sendMessage(send(`echo:${key}-2`, { taskId: id, contextId })).then((r) => {
      answered = true;
      return asTask(r);
    });
    // What is shown here is an absence: while A's run holds the task, B runs nothing and answers nothing.
    const startedEarly = await Promise.race([
      b.next("B's run", (m) => m.started === `${key}-2`).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), 500)),
    ]);
    expect([startedEarly, answered]).toEqual([false, false]);

    a.go(key);
    expect(await within("A's stream to end at its question", onA.done)).toBe("ended");
    const task = await within("B's answer", answer, 10_000);
    await b.next("B's run of the second message", (m) => m.started === `${key}-2`);
    expect(onA.events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "status:INPUT_REQUIRED"]);
    expect(task.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((x) => textOfParts(x.parts))).toEqual([`echo ${key}-2`]);
    // The question A asked comes before the answer that B ran, in the task each process wrote.
    expect(task.history.map((m) => `${m.role === Role.ROLE_AGENT ? "agent" : "user"}:${textOfParts(m.parts)}`)).toEqual([
      `user:hold:${key}`,
      "agent:more?",
      `user:echo:${key}-2`,
    ]);
    const viaA = await clientA.getTask({ tenant: "", id, historyLength: undefined });
    expect([viaA.status?.state, viaA.history.length]).toEqual([S.TASK_STATE_COMPLETED, 3]);
  });

  /** A receiver that answers 503 until `open()`, then 200, keeping the bodies it took (`delivered`). */
  async function refusingReceiver(): Promise<{ receiver: Receiver; delivered: string[]; open: () => void }> {
    const receiver = await new Receiver().start();
    let up = false;
    const delivered: string[] = [];
    receiver.answer = (got) => {
      if (!up) return 503;
      delivered.push(got.body);
      return 200;
    };
    return { receiver, delivered, open: () => void (up = true) };
  }

  test("A killed mid-task: B fails the task within the lease, and delivers every notification A could not", async () => {
    // Refused while A lives: every notification A wrote is still in the outbox when it dies.
    const { receiver, delivered, open } = await refusingReceiver();
    try {
      const victim = await startAgentProcess(postgres.url, leaseMs);
      const client = await victim.client("JSONRPC");
      const contextId = `ctx-kill-${Date.now()}`;
      const hook = receiver.url("/killed");
      const stream = follow("JSONRPC", client.sendMessageStream(send("hang:kill", { contextId, push: { url: hook, id: "hook" } })));
      await within("the victim's task to reach its artifact", stream.atLeast(3));
      const id = asTask(stream.events[0]!.payload!.value).id;
      await receiver.when("the victim's first delivery attempt", () => receiver.on("/killed").length > 0);
      await victim.kill();
      const killedAt = Date.now();
      open();

      const viaB = await b.client("HTTP+JSON");
      const failed = await until(
        "B to see the task FAILED",
        async () => {
          const task = await viaB.getTask({ tenant: "", id, historyLength: undefined });
          return task.status?.state === S.TASK_STATE_FAILED ? task : undefined;
        },
        4 * leaseMs,
      );
      const tookMs = Date.now() - killedAt;
      // The lease lapses at most leaseMs after the last renewal; a reaper looks every half lease.
      expect(tookMs).toBeLessThan(1.5 * leaseMs + 500);
      expect(failed.status?.message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : ""))).toEqual([
        "the agent instance running this task stopped before the task ended",
      ]);
      const kinds = () => [...new Set(delivered.map(kindOf))];
      await receiver.when("every notification", () => kinds().includes("status:TASK_STATE_FAILED"), 4 * leaseMs);
      // At least once: each in order of the task's events, whoever delivered it.
      expect(kinds()).toEqual(["task", "status:TASK_STATE_WORKING", "artifact:x", "status:TASK_STATE_FAILED"]);
    } finally {
      await receiver.stop();
    }
  });

  test("A killed with a waiting task's notifications undelivered, the task taken up at once by a run on B: A's notifications are delivered while B's run holds the task, each once", async () => {
    const { receiver, delivered, open } = await refusingReceiver();
    const key = `taken-${Date.now()}`;
    try {
      const victim = await startAgentProcess(postgres.url, leaseMs);
      const contextId = `ctx-taken-${Date.now()}`;
      const waiting = asTask(await (await victim.client("JSONRPC")).sendMessage(send(`ask:${key}`, { contextId, push: { url: receiver.url("/taken"), id: "hook" } })));
      expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      await receiver.when("the victim's first delivery attempt", () => receiver.on("/taken").length > 0);
      await victim.kill();
      open();
      // Answered through B before A's claims lapse: B's run holds the task (WORKING) until go.
      const onB = follow("JSONRPC", (await b.client("JSONRPC")).sendMessageStream(send(`hold:${key}`, { taskId: waiting.id, contextId })));
      await b.next("B's run", (m) => m.started === key);
      const kinds = () => delivered.map(kindOf);
      await receiver.when("A's notifications, B's run still holding the task", () => kinds().includes("status:TASK_STATE_INPUT_REQUIRED"), 4 * leaseMs);
      // A's in their order; B's WORKING, sent by B at once, may come before them (D74).
      expect(kinds().filter((k) => k !== "status:TASK_STATE_WORKING")).toEqual(["task", "status:TASK_STATE_INPUT_REQUIRED"]);
      b.go(key);
      expect(await within("B's run to ask again", onB.done)).toBe("ended");
      await receiver.when("B's question", () => kinds().filter((k) => k === "status:TASK_STATE_INPUT_REQUIRED").length === 2);
      expect(kinds().sort()).toEqual(["status:TASK_STATE_INPUT_REQUIRED", "status:TASK_STATE_INPUT_REQUIRED", "status:TASK_STATE_WORKING", "task"]);
    } finally {
      b.go(key);
      await receiver.stop();
    }
  });
});

test("a PGlite agent killed mid-task and started again on its data directory has its tasks; the one it ran is FAILED", async () => {
  const dir = await mkdtemp(join(tmpdir(), "a2a-pglite-agent-"));
  const leaseMs = 1000;
  try {
    const first = await startAgentProcess(`pglite:${dir}`, leaseMs);
    const client = await first.client("GRPC");
    const done = asTask(await client.sendMessage(send("echo:kept")));
    const waiting = asTask(await client.sendMessage(send("ask:kept")));
    const stream = follow("GRPC", client.sendMessageStream(send("hang:kept")));
    await within("the running task's artifact", stream.atLeast(3));
    const running = asTask(stream.events[0]!.payload!.value).id;
    await first.kill();

    const second = await startAgentProcess(`pglite:${dir}`, leaseMs);
    const again = await second.client("JSONRPC");
    const got = await again.getTask({ tenant: "", id: done.id, historyLength: undefined });
    expect([got.status?.state, got.artifacts[0]?.parts[0]?.content]).toEqual([S.TASK_STATE_COMPLETED, { $case: "text", value: "echo kept" }]);
    expect((await again.getTask({ tenant: "", id: waiting.id, historyLength: undefined })).status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    await until(
      "the task the killed process ran to be FAILED",
      async () => (await again.getTask({ tenant: "", id: running, historyLength: undefined })).status?.state === S.TASK_STATE_FAILED,
      4 * leaseMs,
    );
    expect((await again.listTasks(listParams({}))).tasks.map((t) => t.id).sort()).toEqual([done.id, waiting.id, running].sort());
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A notification's kind: its payload's case, with the state or the artifact's id. */
function kindOf(body: string): string {
  const json = JSON.parse(body) as Record<string, { status?: { state: string }; artifact?: { artifactId: string } }>;
  if (json.task !== undefined) return "task";
  if (json.statusUpdate !== undefined) return `status:${json.statusUpdate.status?.state}`;
  if (json.artifactUpdate !== undefined) return `artifact:${json.artifactUpdate.artifact?.artifactId}`;
  return Object.keys(json).join(",");
}
