/**
 * The JSON bindings' default idle bound (heartbeatTimeoutMs, D30) against
 * this project's agent, which sends an SSE heartbeat every `heartbeatMs`
 * (D14): served here with 50 ms heartbeats and reached through a loopback
 * proxy the test can stall (a half-open link: no byte, no reset). The
 * bound, 45 s by default, is shortened to 300 ms, six heartbeats.
 * @a2a-js/sdk's server, which sends none, is in a2a-js-server.test.ts.
 */
import { jest } from "@jest/globals";
import { isRpcError } from "protoc-gen-a2a/runtime";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, followA2AServiceTask, type A2AServiceClient } from "../../generated/a2a_client.js";
import { Role, TaskState, type StreamResponse } from "../../generated/a2a_pb.js";
import { startCuttingProxy, type CuttingProxy } from "../support/cutting-proxy.js";
import { Scripts, deferred, startAgent, within, type Deferred, type TestAgent } from "../support/task-clients.js";

jest.setTimeout(30_000);

const BOUND_MS = 300;
const scripts = new Scripts();
let agent: TestAgent;

beforeAll(async () => {
  agent = await startAgent(scripts.executor, {}, { heartbeatMs: 50 });
});

afterAll(async () => {
  await agent?.close();
});

describe.each(["JSONRPC", "HTTP+JSON"] as const)("%s", (binding) => {
  let proxy: CuttingProxy;
  let client: A2AServiceClient;
  /** The task's WORKING is out; resolving `done` completes it. */
  let working: Deferred;
  let done: Deferred;
  let key: string;

  beforeEach(async () => {
    const target = new URL(agent.server.cardUrl);
    proxy = await startCuttingProxy({ host: target.hostname, port: Number(target.port) });
    const origin = `http://127.0.0.1:${proxy.port}`;
    client =
      binding === "JSONRPC"
        ? createA2AServiceJsonRpcClient(`${origin}/a2a/jsonrpc`, { heartbeatTimeoutMs: BOUND_MS })
        : createA2AServiceHttpJsonClient(`${origin}/a2a/rest`, { heartbeatTimeoutMs: BOUND_MS });
    const [w, d] = [deferred(), deferred()];
    [working, done] = [w, d];
    key = scripts.add(`quiet ${binding}`, async function* () {
      yield { state: TaskState.WORKING };
      w.resolve();
      await d.promise;
      yield { state: TaskState.COMPLETED };
    });
  });

  afterEach(async () => {
    done.resolve();
    client.close();
    await proxy.close();
  });

  const request = () => ({ message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: key } }] } });
  const stateOf = (e: StreamResponse) => (e.payload.case === "statusUpdate" ? (TaskState[e.payload.value.status?.state ?? 0] ?? "?") : (e.payload.case ?? "none"));

  test("a half-open connection after heartbeats: the stream is cut after heartbeatTimeoutMs, and a follow goes on", async () => {
    const retried: string[] = [];
    const cutSeen = deferred();
    const follow = followA2AServiceTask(client, request(), { backoffMs: 1, onRetry: (r) => (retried.push(`${r.error.entry.grpcStatus}: ${r.error.message}`), cutSeen.resolve()) });
    const states: string[] = [];
    const read = (async () => {
      for await (const item of follow) states.push(stateOf(item.event));
    })();
    await within("the task working", working.promise);
    // A heartbeat (not the "Connection: keep-alive" header) is on its way to the client: its stream is bounded from then on.
    await within("a heartbeat passing the proxy", proxy.passed(": keep-alive\n\n"));
    proxy.stall();
    // Without a bound the follow waited for the kernel; the reconnection, a new connection, is forwarded.
    await within("the stalled stream being cut", cutSeen.promise);
    done.resolve();
    await within("the follow ending", read);
    expect(retried).toEqual([expect.stringMatching(/^UNAVAILABLE: .*heartbeatTimeoutMs/)]);
    expect(states.at(-1)).toBe("COMPLETED");
  });

  test("a plain stream stalled after heartbeats fails UNAVAILABLE", async () => {
    const stalled = collect(client.sendStreamingMessage(request()));
    await within("the task working", working.promise);
    await within("a heartbeat passing the proxy", proxy.passed(": keep-alive\n\n"));
    proxy.stall();
    const err = await within("the stalled stream failing", stalled.then(() => undefined, (e: unknown) => e));
    expect(isRpcError(err) ? [err.entry.grpcStatus, err.message] : err).toEqual(["UNAVAILABLE", expect.stringContaining("heartbeatTimeoutMs")]);
  });

  test("a task quiet for longer than heartbeatTimeoutMs, its heartbeats coming: nothing is cut", async () => {
    const events = collect(client.sendStreamingMessage(request()));
    await within("the task working", working.promise);
    // The quiet itself is what is tested: three bounds long, heartbeats only.
    await new Promise((resolve) => setTimeout(resolve, 3 * BOUND_MS));
    done.resolve();
    expect((await events).map(stateOf)).toEqual(["task", "WORKING", "COMPLETED"]);
  });
});

describe("a follow's reconnection, on an agent known to send heartbeats", () => {
  // Heartbeats every 200 ms: a stream stalled right after it starts has carried none of its own.
  let slow: TestAgent;
  let proxy: CuttingProxy;
  beforeAll(async () => {
    slow = await startAgent(scripts.executor, {}, { heartbeatMs: 200 });
  });
  afterAll(async () => {
    await slow?.close();
  });
  afterEach(async () => {
    await proxy?.close();
  });

  test.each(["JSONRPC", "HTTP+JSON"] as const)("%s: the new stream is bounded from its start, so a link stalled again at once is cut too", async (binding) => {
    const target = new URL(slow.server.cardUrl);
    proxy = await startCuttingProxy({ host: target.hostname, port: Number(target.port) });
    const origin = `http://127.0.0.1:${proxy.port}`;
    const client =
      binding === "JSONRPC"
        ? createA2AServiceJsonRpcClient(`${origin}/a2a/jsonrpc`, { heartbeatTimeoutMs: BOUND_MS })
        : createA2AServiceHttpJsonClient(`${origin}/a2a/rest`, { heartbeatTimeoutMs: BOUND_MS });
    const [working, done] = [deferred(), deferred()];
    const key = scripts.add(`reconnected ${binding}`, async function* () {
      yield { state: TaskState.WORKING };
      working.resolve();
      await done.promise;
      yield { state: TaskState.COMPLETED };
    });
    const cuts = [deferred(), deferred()];
    const retried: string[] = [];
    const request = { message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: key } }] } };
    const follow = followA2AServiceTask(client, request, {
      backoffMs: 1,
      // The second stall also held the pooled connection of the first reconnection's GetTask.
      getTaskTimeoutMs: 500,
      onRetry: (r) => {
        retried.push(`${r.error.entry.grpcStatus}: ${r.error.message}`);
        cuts[retried.length - 1]?.resolve();
      },
    });
    const states: string[] = [];
    const read = (async () => {
      for await (const item of follow) states.push(item.event.payload.case ?? "none");
    })();
    try {
      await within("the task working", working.promise);
      await within("a heartbeat passing the proxy", proxy.passed(": keep-alive\n\n"));
      proxy.stall();
      await within("the first stalled stream being cut", cuts[0]!.promise);
      // The reconnection's first event (the task's snapshot) is through: stalled before its first heartbeat.
      await within("the reconnection's first event", proxy.passed("data:"));
      proxy.stall();
      await within("the second stalled stream being cut", cuts[1]!.promise);
      done.resolve();
      await within("the follow ending", read);
    } finally {
      done.resolve();
      client.close();
    }
    expect(retried.slice(0, 2)).toEqual([expect.stringMatching(/^UNAVAILABLE: .*heartbeatTimeoutMs/), expect.stringMatching(/^UNAVAILABLE: .*heartbeatTimeoutMs/)]);
    // A GetTask sent on a connection the stall held got no answer: a reconnection of its own.
    expect(retried.slice(2)).toEqual(retried.slice(2).map(() => expect.stringMatching(/^UNAVAILABLE: .*getTaskTimeoutMs/)));
    expect(states.at(-1)).toBe("statusUpdate");
  });
});

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}
