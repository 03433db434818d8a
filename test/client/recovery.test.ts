/**
 * Stream recovery (D30) over real sockets, on each binding: the generated
 * client reaches this project's agent through a loopback TCP proxy the test
 * cuts. The agent streams one long artifact in chunks, each let go by the
 * test and reported back once the agent has applied it, so what happens
 * while the follower is cut off is decided by the test, never by timing.
 */
import { jest } from "@jest/globals";
import type { FollowedEvent, TaskFollow } from "protoc-gen-a2a/runtime";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, followA2AServiceTask, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, TaskState, type StreamResponse, type Task } from "../../generated/a2a_pb.js";
import { startCuttingProxy, type CuttingProxy } from "../support/cutting-proxy.js";
import { BINDINGS, Scripts, chunk, deferred, startAgent, within, type BindingName, type Deferred, type TestAgent } from "../support/task-clients.js";

jest.setTimeout(30_000);

const CHUNKS = 12;
const chunkText = (i: number) => `chunk ${String(i).padStart(2, "0")}; `;
const textFrom = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => chunkText(from + k)).join("");
const FULL = textFrom(0, CHUNKS - 1);

/** One long task's pace: the test lets each chunk go, and learns when the agent has applied it. */
class Pace {
  readonly #gates: Deferred[] = Array.from({ length: CHUNKS }, () => deferred());
  readonly #applied: Deferred[] = Array.from({ length: CHUNKS }, () => deferred());
  /** The agent set COMPLETED. */
  readonly finished = deferred();

  /** Lets chunks up to `last` go and resolves once the agent has applied them. */
  release(last: number): Promise<void> {
    for (let i = 0; i <= last; i++) this.#gates[i]!.resolve();
    return within(`the agent applying chunk ${last}`, this.#applied[last]!.promise);
  }

  /** The executor's events: WORKING, the chunks as they are let go, COMPLETED. */
  async *events() {
    try {
      yield { state: TaskState.WORKING };
      for (let i = 0; i < CHUNKS; i++) {
        await this.#gates[i]!.promise;
        yield chunk(chunkText(i), "doc", { append: i > 0, last: i === CHUNKS - 1 });
        // Asked for the next event: the runtime has applied (and stored) this one.
        this.#applied[i]!.resolve();
      }
      yield { state: TaskState.COMPLETED };
    } finally {
      // The runtime stops reading at the terminal state and returns the executor: COMPLETED is stored.
      this.finished.resolve();
    }
  }
}

const scripts = new Scripts();
let agent: TestAgent;

beforeAll(async () => {
  agent = await startAgent(scripts.executor);
});

afterAll(async () => {
  await agent?.close();
});

/** The text of an event's artifact parts ("" for other events). */
function chunkOf(item: FollowedEvent<StreamResponse, Task>): string {
  const p = item.event.payload;
  return p.case === "artifactUpdate" ? (p.value.artifact?.parts ?? []).map((part) => (part.content.case === "text" ? part.content.value : "")).join("") : "";
}

const stateOf = (item: FollowedEvent<StreamResponse, Task>) => (item.event.payload.case === "statusUpdate" ? item.event.payload.value.status?.state : undefined);

/** A follow read in the background: its items, how it ended, and a way to wait for an item. */
function watch(follow: TaskFollow<StreamResponse, Task>) {
  const items: FollowedEvent<StreamResponse, Task>[] = [];
  const waiters: { test: (item: FollowedEvent<StreamResponse, Task>) => boolean; wake: () => void }[] = [];
  const done = (async () => {
    for await (const item of follow) {
      items.push(item);
      for (const w of waiters.splice(0)) if (w.test(item)) w.wake();
      else waiters.push(w);
    }
  })();
  // Settled either way, so a test that awaits something else sees no unhandled rejection.
  const ended: Promise<unknown> = done.then(
    () => undefined,
    (err: unknown) => err,
  );
  const sees = (what: string, test: (item: FollowedEvent<StreamResponse, Task>) => boolean) =>
    within(`the follower seeing ${what}`, items.some(test) ? Promise.resolve() : new Promise<void>((wake) => waiters.push({ test, wake })));
  return { items, done, ended, seesChunk: (i: number) => sees(chunkText(i), (item) => chunkOf(item).includes(chunkText(i))) };
}

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  let proxy: CuttingProxy;
  let client: A2AServiceClient;
  let calls: string[];
  let pace: Pace;
  let key: string;
  let origin: string;
  let grpcTarget: string;

  beforeEach(async () => {
    const target = binding === "GRPC" ? agent.server.grpcAddress! : new URL(agent.server.cardUrl).host;
    const [host, port] = [target.slice(0, target.lastIndexOf(":")), Number(target.slice(target.lastIndexOf(":") + 1))];
    proxy = await startCuttingProxy({ host, port });
    origin = `http://127.0.0.1:${proxy.port}`;
    grpcTarget = `127.0.0.1:${proxy.port}`;
    const direct =
      binding === "JSONRPC"
        ? createA2AServiceJsonRpcClient(`${origin}/a2a/jsonrpc`)
        : binding === "HTTP+JSON"
          ? createA2AServiceHttpJsonClient(`${origin}/a2a/rest`)
          : createA2AServiceGrpcClient(`127.0.0.1:${proxy.port}`);
    calls = [];
    // The follower's calls, in order: which of them it made is part of what is tested.
    client = {
      ...direct,
      sendStreamingMessage: (request, options) => (calls.push("send"), direct.sendStreamingMessage(request, options)),
      getTask: (request, options) => (calls.push("get"), direct.getTask(request, options)),
      subscribeToTask: (request, options) => (calls.push("subscribe"), direct.subscribeToTask(request, options)),
    };
    pace = new Pace();
    const own = pace;
    key = scripts.add(`long ${binding}`, () => own.events());
  });

  afterEach(async () => {
    // Whatever the test left running finishes.
    void pace.release(CHUNKS - 1).catch(() => undefined);
    client.close();
    await proxy.close();
  });

  const request = () => ({ message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: key } }] } });

  test("a stream cut mid-task, and cut again while resubscribed: every chunk once, then COMPLETED", async () => {
    const retries: number[] = [];
    const follow = followA2AServiceTask(client, request(), { backoffMs: 1, onRetry: (r) => retries.push(r.attempt) });
    const w = watch(follow);
    await pace.release(2);
    await w.seesChunk(2);

    // Cut off: chunks 3 to 5 happen while the follower cannot reach the agent.
    proxy.hold();
    proxy.cut();
    await pace.release(5);
    proxy.resume();
    await w.seesChunk(5);
    await pace.release(7);
    await w.seesChunk(7);

    // Cut again, on the resubscribed stream.
    proxy.hold();
    proxy.cut();
    await pace.release(9);
    proxy.resume();
    await w.seesChunk(9);
    await pace.release(CHUNKS - 1);
    await within("the follow ending", w.done);

    expect(w.items.map(chunkOf).join("")).toBe(FULL);
    // What happened while cut off came from the snapshots, as one appended chunk each time.
    expect(w.items.filter((i) => i.synthetic).map(chunkOf)).toEqual([textFrom(3, 5), textFrom(8, 9)]);
    expect(w.items.filter((i) => i.synthetic).every((i) => i.event.payload.case === "artifactUpdate" && i.event.payload.value.append)).toBe(true);
    expect(w.items[0]?.event.payload.case).toBe("task");
    expect(w.items.filter((i) => i.event.payload.case === "task")).toHaveLength(1);
    expect(stateOf(w.items.at(-1)!)).toBe(TaskState.COMPLETED);
    expect(follow.task?.status?.state).toBe(TaskState.COMPLETED);
    expect(follow.task?.artifacts.map((a) => a.parts.map((p) => p.content.value).join(""))).toEqual([FULL]);
    expect(retries).toEqual([1, 1]);
    expect(calls).toEqual(["send", "get", "subscribe", "get", "subscribe"]);
  });

  test("a task that finished while cut off: GetTask says so, no subscription, the rest and the final state arrive", async () => {
    const follow = followA2AServiceTask(client, request(), { backoffMs: 1 });
    const w = watch(follow);
    await pace.release(2);
    await w.seesChunk(2);
    proxy.hold();
    proxy.cut();
    await pace.release(CHUNKS - 1);
    await within("the task finishing", pace.finished.promise);
    proxy.resume();
    await within("the follow ending", w.done);

    expect(calls).toEqual(["send", "get"]);
    expect(w.items.map(chunkOf).join("")).toBe(FULL);
    const rest = w.items.filter((i) => i.synthetic);
    expect(rest.map((i) => i.event.payload.case)).toEqual(["artifactUpdate", "statusUpdate"]);
    expect(chunkOf(rest[0]!)).toBe(textFrom(3, CHUNKS - 1));
    // Nothing can follow a terminal task's chunks: the one made from its snapshot is the last.
    expect(rest[0]?.event.payload.value).toMatchObject({ append: true, lastChunk: true });
    expect(stateOf(rest[1]!)).toBe(TaskState.COMPLETED);
    expect(follow.task?.status?.state).toBe(TaskState.COMPLETED);
  });

  test("an agent that stays unreachable: the last UNAVAILABLE after maxRetries reconnections", async () => {
    const retries: number[] = [];
    const follow = followA2AServiceTask(client, request(), { backoffMs: 1, maxRetries: 3, onRetry: (r) => retries.push(r.attempt) });
    const w = watch(follow);
    await pace.release(1);
    await w.seesChunk(1);
    await proxy.close();
    const err = await within("the follow failing", w.ended);
    expect(err).toMatchObject({ name: "UnavailableError" });
    expect(retries).toEqual([1, 2, 3]);
    expect(calls).toEqual(["send", "get", "get", "get"]);
  });

  test("an agent away for a while and back: the follower reconnects once it is back, gRPC's channel backoff notwithstanding", async () => {
    // grpc-js's channel waits 1 s (x1.6, up to 120 s) between its own reconnection attempts and fails
    // every call at once meanwhile: the follower spent its retries there and gave up with the agent back.
    const retries: number[] = [];
    const follow = followA2AServiceTask(client, request(), {
      backoffMs: 20,
      maxBackoffMs: 100,
      onRetry: (r) => {
        retries.push(r.attempt);
        // A reconnection has failed (the channel is in its backoff): the proxy is back from now on.
        if (r.attempt === 2) void proxy.listen();
      },
    });
    const w = watch(follow);
    await pace.release(1);
    await w.seesChunk(1);
    await proxy.refuse();
    await pace.release(4);
    await pace.release(CHUNKS - 1);
    await within("the follow ending", w.done);

    expect(w.items.map(chunkOf).join("")).toBe(FULL);
    expect(follow.task?.status?.state).toBe(TaskState.COMPLETED);
    expect(retries.length).toBeGreaterThanOrEqual(2);
  });

  test("a connection gone silent (half-open): the stream is cut after streamIdleTimeoutMs (gRPC: keepalive) and the follow goes on", async () => {
    // No byte, no reset: without a bound the follow waited for as long as the kernel kept the socket.
    const quiet =
      binding === "JSONRPC"
        ? createA2AServiceJsonRpcClient(`${origin}/a2a/jsonrpc`, { streamIdleTimeoutMs: 300 })
        : binding === "HTTP+JSON"
          ? createA2AServiceHttpJsonClient(`${origin}/a2a/rest`, { streamIdleTimeoutMs: 300 })
          : createA2AServiceGrpcClient(grpcTarget, { channelOptions: { "grpc.keepalive_time_ms": 200, "grpc.keepalive_timeout_ms": 200 } });
    try {
      const errors: string[] = [];
      const follow = followA2AServiceTask(quiet, request(), { backoffMs: 1, onRetry: (r) => errors.push(r.error.entry.grpcStatus) });
      const w = watch(follow);
      await pace.release(1);
      await w.seesChunk(1);
      proxy.stall();
      await pace.release(CHUNKS - 1);
      await within("the follow ending", w.done);
      expect(w.items.map(chunkOf).join("")).toBe(FULL);
      expect(follow.task?.status?.state).toBe(TaskState.COMPLETED);
      expect(errors).toEqual(["UNAVAILABLE"]);
    } finally {
      quiet.close();
    }
  });

  test("the caller's abort is CANCELLED and never retried", async () => {
    const retries: number[] = [];
    const aborted = new AbortController();
    const follow = followA2AServiceTask(client, request(), { backoffMs: 1, signal: aborted.signal, onRetry: (r) => retries.push(r.attempt) });
    const w = watch(follow);
    await pace.release(1);
    await w.seesChunk(1);
    aborted.abort();
    const err = await within("the follow failing", w.ended);
    expect(err).toMatchObject({ name: "CancelledError" });
    expect(retries).toEqual([]);
    expect(calls).toEqual(["send"]);
  });
});
