/**
 * serveA2AService's close() past its drain: the handler's close() ends what
 * is open, and the connections still open a second later are cut, whatever
 * that close() does, a failure included (the failure is close()'s to
 * reject with, after the cut). A handler with no close() is not waited for.
 */
import { connect } from "node:net";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { deferred, taskCard, within, type Deferred } from "../support/task-clients.js";

/** Resolved when the handler got the call: the server holds its connection from then on. */
let called: Deferred<void> = deferred();

/** A handler whose SendMessage never answers, with the given close(). */
const hanging = (close?: () => Promise<void>) =>
  ({
    sendMessage: () => {
      called.resolve();
      return new Promise<never>(() => undefined);
    },
    ...(close === undefined ? {} : { close }),
  }) as unknown as A2AServiceHandler;

/** A SendMessage on JSON-RPC that the server never answers: settles when its connection ends. */
function callThatHangs(url: string): Promise<string> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } } }),
  }).then(
    (r) => `answered ${r.status}`,
    (err: unknown) => `cut: ${(err as Error).message}`,
  );
}

test("a handler whose close() fails: the open connections are still cut, and close() rejects with that failure", async () => {
  const served = await serveA2AService(hanging(() => Promise.reject(new Error("the store would not close (for the test)"))), taskCard, { port: 0, grpcPort: false, host: "127.0.0.1", drainMs: 100 });
  called = deferred();
  const call = callThatHangs(served.jsonRpcUrl!);
  await within("the call to reach the handler", called.promise);
  const closing = served.close().then(
    () => "closed",
    (err: unknown) => `rejected: ${(err as Error).message}`,
  );
  expect(await within("close()", closing, 5000)).toBe("rejected: the store would not close (for the test)");
  expect(await within("the open call to end", call, 5000)).toMatch(/^cut: /);
});

test("a handler with no close(): the connections are cut right after the drain, not a grace time later", async () => {
  const served = await serveA2AService(hanging(), taskCard, { port: 0, grpcPort: false, host: "127.0.0.1", drainMs: 100 });
  called = deferred();
  const call = callThatHangs(served.jsonRpcUrl!);
  await within("the call to reach the handler", called.promise);
  const started = performance.now();
  await within("close()", served.close(), 5000);
  expect(performance.now() - started).toBeLessThan(900);
  expect(await within("the open call to end", call, 5000)).toMatch(/^cut: /);
});

test("a TCP connection to the gRPC port that never sends HTTP/2's preface (a probe, a stalled client) does not hold close() for ever", async () => {
  const served = await serveA2AService(hanging(), taskCard, { port: 0, grpcPort: 0, host: "127.0.0.1", drainMs: 100 });
  const [host, port] = served.grpcAddress!.split(":");
  const probe = connect(Number(port), host);
  await new Promise<void>((resolve) => probe.once("connect", () => resolve()));
  try {
    // node's http2 leaves such a socket open on close, and grpc-js's forceShutdown with it.
    await within("close() to resolve", served.close());
  } finally {
    probe.destroy();
  }
});
