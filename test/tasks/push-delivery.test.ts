/**
 * Push-notification delivery against a real HTTP receiver on loopback: what
 * arrives (headers, body, order), retries and their backoff, timeouts,
 * redirects, independence of lanes, shutdown, and the SSRF guard both when a
 * config is checked and when a notification is sent.
 */
import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { jest } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import { Role, SendMessageRequestSchema, TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { createPushDelivery, type PushDelivery, type PushDeliveryOptions, type PushTarget } from "../../runtime/a2a/tasks/push-delivery.js";
import { embeddedIpv4, shownUrl } from "../../runtime/a2a/tasks/push-guard.js";

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
  readonly at: number;
}

type Answer = (req: Received, res: ServerResponse) => void | Promise<void>;

/** A webhook receiver: records every request, answers as the test says (200 by default). */
class Receiver {
  readonly received: Received[] = [];
  connections = 0;
  answer: Answer = (_req, res) => void res.end("ok");
  #server: Server;
  #waiters: { count: (r: Received[]) => boolean; wake: () => void }[] = [];

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const got: Received = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString(), at: performance.now() };
        this.received.push(got);
        this.#waiters = this.#waiters.filter((w) => (w.count(this.received) ? (w.wake(), false) : true));
        void this.answer(got, res);
      });
    });
    this.#server.on("connection", () => this.connections++);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  url(path = "/hook", host = "127.0.0.1"): string {
    return `http://${host}:${this.port}${path}`;
  }

  /** Resolves once the requests received satisfy `until` (a count: that many). */
  when(until: number | ((r: Received[]) => boolean)): Promise<void> {
    const count = typeof until === "number" ? (r: Received[]) => r.length >= until : until;
    if (count(this.received)) return Promise.resolve();
    return new Promise((wake) => this.#waiters.push({ count, wake }));
  }

  bodies(path?: string): string[] {
    return this.received.filter((r) => path === undefined || r.path === path).map((r) => r.body);
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const loopback = ["127.0.0.0/8"];
let receiver: Receiver;
let delivery: Required<PushDelivery> | undefined;
let errors: { message: string; taskId: string; url: string }[];

function start(options: PushDeliveryOptions = {}): Required<PushDelivery> {
  delivery = createPushDelivery({
    allow: loopback,
    backoffMs: 10,
    onError: (error, info) => errors.push({ message: error.message, ...info }),
    ...options,
  });
  return delivery;
}

const target = (url: string) => ({ url, token: "" });
const stall: Answer = () => undefined;

beforeEach(async () => {
  errors = [];
  receiver = await new Receiver().start();
});

afterEach(async () => {
  await delivery?.close();
  delivery = undefined;
  await receiver.stop();
});

describe("what the receiver gets", () => {
  test("POST with the A2A content type, the body as given, Authorization and the token header", async () => {
    const push = start();
    const body = '{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"}}}';
    push.deliver(
      "t1",
      [
        { url: receiver.url("/with"), token: "tok-1", authentication: { scheme: "Bearer", credentials: "secret" } },
        { url: receiver.url("/without"), token: "", authentication: { scheme: "", credentials: "ignored" } },
        { url: receiver.url("/scheme-only"), token: "", authentication: { scheme: "Negotiate", credentials: "" } },
      ],
      body,
    );
    await push.idle();
    expect(receiver.received.find((r) => r.path === "/scheme-only")?.headers["authorization"]).toBe("Negotiate");

    const withAuth = receiver.received.find((r) => r.path === "/with");
    const without = receiver.received.find((r) => r.path === "/without");
    expect(withAuth).toBeDefined();
    expect(without).toBeDefined();
    expect(withAuth?.body).toBe(body);
    expect(withAuth?.headers["content-type"]).toBe("application/a2a+json");
    expect(withAuth?.headers["authorization"]).toBe("Bearer secret");
    expect(withAuth?.headers["x-a2a-notification-token"]).toBe("tok-1");
    expect(without?.body).toBe(body);
    expect(without?.headers["content-type"]).toBe("application/a2a+json");
    expect(without?.headers).not.toHaveProperty("authorization");
    expect(without?.headers).not.toHaveProperty("x-a2a-notification-token");
    expect(errors).toEqual([]);
  });

  test("one lane keeps order over 50 notifications while the receiver is slow on some", async () => {
    receiver.answer = async (req, res) => {
      const n = Number(JSON.parse(req.body).n);
      if (n % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 15));
      res.end();
    };
    const push = start();
    const sent = Array.from({ length: 50 }, (_, n) => JSON.stringify({ n }));
    for (const body of sent) push.deliver("t1", [target(receiver.url())], body);
    await push.idle();
    expect(receiver.bodies()).toEqual(sent);
    expect(errors).toEqual([]);
  });

  test("response bodies are drained, so a lane reuses its connections", async () => {
    // Larger than the client's stream buffer: an answer left unread would
    // keep its socket busy, and every notification would need a new one.
    receiver.answer = (_req, res) => void res.end("x".repeat(100_000));
    const push = start();
    for (let n = 0; n < 6; n++) push.deliver("t1", [target(receiver.url())], `{"n":${n}}`);
    await push.idle();
    expect(receiver.received).toHaveLength(6);
    // Not always 1: undici's pool may open a second socket when the next
    // request is sent a tick before the first socket is marked free.
    expect(receiver.connections).toBeLessThanOrEqual(2);
  });
});

describe("failures and retries", () => {
  test("two 500s then a 200: delivered once, on the third attempt, with a growing backoff", async () => {
    receiver.answer = (_req, res) => {
      res.statusCode = receiver.received.length <= 2 ? 500 : 200;
      res.end();
    };
    const backoffMs = 40;
    const push = start({ backoffMs, maxAttempts: 5 });
    push.deliver("t1", [target(receiver.url())], "{}");
    await push.idle();

    expect(receiver.received).toHaveLength(3);
    expect(errors).toEqual([]);
    const [a, b, c] = receiver.received.map((r) => r.at) as [number, number, number];
    // First retry after about backoffMs, the second after about twice that
    // (jitter adds at most 20 %, so the second gap always outgrows the first).
    expect(b - a).toBeGreaterThanOrEqual(backoffMs - 2);
    expect(c - b).toBeGreaterThan(b - a);
    expect(c - b).toBeGreaterThanOrEqual(2 * backoffMs - 2);
  });

  test("a receiver that always fails gets exactly maxAttempts attempts, then onError once naming the url", async () => {
    receiver.answer = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    const push = start({ maxAttempts: 3 });
    const url = receiver.url();
    push.deliver("t1", [target(url)], "{}");
    await push.idle();

    expect(receiver.received).toHaveLength(3);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ taskId: "t1", url });
    expect(errors[0]?.message).toContain(url);
    expect(errors[0]?.message).toContain("503");
  });

  test("a task handler without onError logs a push given up as a push failure, naming the task and url (not as a failed task)", async () => {
    receiver.answer = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    const logged: string[] = [];
    const spy = jest.spyOn(console, "error").mockImplementation((line: unknown) => void logged.push(String(line)));
    const handler = createA2AServiceTaskHandler(
      async function* () {
        yield { state: TaskState.COMPLETED };
      },
      { push: { allow: loopback, maxAttempts: 1 } },
    );
    try {
      const url = receiver.url();
      await handler.sendMessage(
        create(SendMessageRequestSchema, { message: { messageId: "m", role: Role.USER, parts: [{ content: { case: "text", value: "x" } }] }, configuration: { taskPushNotificationConfig: { url } } }),
        { binding: "JSONRPC", headers: new Headers(), signal: new AbortController().signal, principal: undefined, protocolVersion: "1.0", requestedExtensions: [], activatedExtensions: new Set(), tenant: undefined },
      );
      await receiver.when(1);
      await handler.close();
      const line = JSON.parse(logged.find((l) => l.includes("push notification")) ?? "{}") as { msg?: string; taskId?: string; url?: string };
      expect(line.msg).toBe("push notification failed");
      expect(line.url).toBe(url);
      expect(line.taskId).toMatch(/./);
      expect(logged.some((l) => l.includes('"task failed"'))).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  test("a receiver that does not answer in timeoutMs fails the attempt, and the retry succeeds", async () => {
    receiver.answer = (_req, res) => {
      if (receiver.received.length > 1) res.end();
    };
    const push = start({ timeoutMs: 100, maxAttempts: 3 });
    // Measured from the send, not from the first request's arrival: on a loaded machine the
    // first request is recorded late (after its body is read), while its timeout ran from the send.
    const sent = performance.now();
    push.deliver("t1", [target(receiver.url())], "{}");
    await push.idle();

    expect(receiver.received).toHaveLength(2);
    expect(errors).toEqual([]);
    const [, second] = receiver.received as [Received, Received];
    expect(second.at - sent).toBeGreaterThanOrEqual(100 - 2);
  });

  test("a timeout on every attempt is reported as one", async () => {
    receiver.answer = stall;
    const push = start({ timeoutMs: 100, maxAttempts: 2 });
    push.deliver("t1", [target(receiver.url())], "{}");
    await push.idle();

    expect(receiver.received).toHaveLength(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/did not answer within 100 ms/);
  });

  test("a 302 is a failure, not followed and not tried again", async () => {
    receiver.answer = (req, res) => {
      if (req.path === "/hook") res.writeHead(302, { location: receiver.url("/elsewhere") });
      res.end();
    };
    const push = start({ maxAttempts: 3 });
    push.deliver("t1", [target(receiver.url())], "{}");
    await push.idle();

    expect(receiver.bodies("/hook")).toHaveLength(1);
    expect(receiver.bodies("/elsewhere")).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/after 1 attempt: .*302/);
  });

  test("a client error is final, except 408, 425 and 429, which are tried again like a 5xx", async () => {
    const statuses = [400, 401, 403, 404, 408, 410, 425, 429, 500];
    receiver.answer = (req, res) => {
      res.statusCode = Number(req.path.slice(1));
      res.end();
    };
    const push = start({ maxAttempts: 2 });
    push.deliver("t1", statuses.map((status) => target(receiver.url(`/${status}`))), "{}");
    await push.idle();

    const attempts = Object.fromEntries(statuses.map((status) => [status, receiver.bodies(`/${status}`).length]));
    expect(attempts).toEqual({ 400: 1, 401: 1, 403: 1, 404: 1, 408: 2, 410: 1, 425: 2, 429: 2, 500: 2 });
    expect(errors).toHaveLength(statuses.length);
  });

  test("forget(): a deleted config's queued notifications are dropped and the one being retried is not tried again; other configs' go on", async () => {
    let failing = true;
    receiver.answer = (_req, res) => {
      res.statusCode = failing ? 500 : 200;
      res.end();
    };
    const settled: string[] = [];
    // A long backoff: the first notification waits it out when its config is deleted.
    const push = start({ backoffMs: 60_000, maxBackoffMs: 60_000 });
    const of = (configId: string): PushTarget => ({ configId, url: receiver.url(), token: "" });
    const deliver = (configId: string, n: number) => push.deliver("t1", [of(configId)], `{"n":${n}}`, (t) => settled.push(`${t.configId}:${n}`));
    deliver("deleted", 1);
    deliver("deleted", 2);
    deliver("kept", 3);
    deliver("deleted", 4);
    await receiver.when(1);
    push.forget("t2", "deleted");
    push.forget("t1", "deleted");
    failing = false;
    await push.idle();

    expect(receiver.bodies()).toEqual(['{"n":1}', '{"n":3}']);
    expect(settled.sort()).toEqual(["deleted:1", "deleted:2", "deleted:4", "kept:3"]);
    expect(errors).toEqual([]);
  });

  test("a settled callback that throws when a full lane drops a notification is reported; every target still gets its own", async () => {
    const push = start({ maxQueued: 1 });
    const thrown = new Error("the outbox is gone");
    const fail = () => {
      throw thrown;
    };
    for (let n = 1; n <= 3; n++) {
      expect(() => push.deliver("t1", [target(receiver.url("/a")), target(receiver.url("/b"))], `{"n":${n}}`, fail)).not.toThrow();
    }
    await push.idle();
    // Queued at once, before either lane started: each kept only the last.
    expect(receiver.bodies("/a")).toEqual(['{"n":3}']);
    expect(receiver.bodies("/b")).toEqual(['{"n":3}']);
    // Two drops per lane, and the delivery of the last.
    expect(errors.filter((e) => e.message === thrown.message)).toHaveLength(6);
    expect(errors.filter((e) => /dropped/.test(e.message))).toHaveLength(4);
  });

  test("maxConnectionsPerOrigin: at most that many sent at once to one origin; a notification's timeout counts from when it is sent", async () => {
    let open = 0;
    let most = 0;
    // Each answered after 150 ms: ten through two at a time take 750 ms, more than the 400 ms timeout.
    receiver.answer = async (_req, res) => {
      most = Math.max(most, ++open);
      await new Promise((resolve) => setTimeout(resolve, 150));
      open--;
      res.end();
    };
    const push = start({ maxConnectionsPerOrigin: 2, timeoutMs: 400, maxAttempts: 1 });
    for (let n = 0; n < 10; n++) push.deliver(`task-${n}`, [target(receiver.url())], `{"n":${n}}`);
    await push.idle();
    expect(receiver.received).toHaveLength(10);
    expect(most).toBe(2);
    expect(errors).toEqual([]);
  });

  test("a full lane drops its oldest waiting notifications and reports each", async () => {
    const push = start({ maxQueued: 2 });
    for (let n = 1; n <= 5; n++) push.deliver("t1", [target(receiver.url())], `{"n":${n}}`);
    await push.idle();

    expect(receiver.bodies()).toEqual(['{"n":4}', '{"n":5}']);
    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error.message).toMatch(/dropped/);
  });
});

describe("never in the caller's way", () => {
  test("deliver() returns before any request is made, even to a receiver that stalls; close() drops the rest", async () => {
    receiver.answer = stall;
    const push = start();
    push.deliver("t1", [target(receiver.url())], '{"n":1}');
    expect(receiver.connections).toBe(0);
    expect(receiver.received).toEqual([]);

    await receiver.when(1);
    // The first is stuck at the receiver; more still queue at once.
    push.deliver("t1", [target(receiver.url())], '{"n":2}');
    push.deliver("t1", [target(receiver.url())], '{"n":3}');

    const idle = push.idle();
    await push.close();
    await idle;
    expect(receiver.bodies()).toEqual(['{"n":1}']);
    // Shutdown is not a delivery failure.
    expect(errors).toEqual([]);
    // After close, deliver() is a no-op.
    push.deliver("t1", [target(receiver.url())], '{"n":4}');
    await push.idle();
    expect(receiver.bodies()).toEqual(['{"n":1}']);
  });

  test("idle() keeps the process up through a backoff, so a shutdown can drain on it", async () => {
    // In a child process with nothing else to keep it up: a backoff's timer alone does not.
    const root = join(fileURLToPath(new URL(".", import.meta.url)), "../..");
    const script = `
      import { createPushDelivery } from ${JSON.stringify(pathToFileURL(join(root, "runtime/a2a/tasks/push-delivery.ts")).href)};
      let errors = 0;
      const push = createPushDelivery({ allow: ["127.0.0.0/8"], backoffMs: 200, maxAttempts: 2, onError: () => errors++ });
      push.deliver("t1", [{ url: "http://127.0.0.1:1/hook", token: "" }], "{}");
      await push.idle();
      console.log("drained, errors " + errors);
      await push.close();
    `;
    const loader = pathToFileURL(join(root, "test/support/ts-loader.mjs")).href;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", loader, "--input-type=module", "-e", script], { cwd: root, timeout: 20_000 });
    expect(stdout.trim()).toBe("drained, errors 1");
  });

  test("close() during a backoff ends it at once", async () => {
    receiver.answer = (_req, res) => {
      res.statusCode = 500;
      res.end();
    };
    const push = start({ backoffMs: 60_000, maxBackoffMs: 60_000 });
    push.deliver("t1", [target(receiver.url())], "{}");
    await receiver.when(1);
    const started = performance.now();
    await push.close();
    await push.idle();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(receiver.received).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  test("a stalled task does not hold back another task, nor another url of the same task", async () => {
    receiver.answer = (req, res) => {
      if (req.path !== "/stalled") res.end();
    };
    const push = start();
    push.deliver("slow", [target(receiver.url("/stalled"))], '{"task":"slow"}');
    push.deliver("slow", [target(receiver.url("/stalled"))], '{"task":"slow","n":2}');
    for (let n = 1; n <= 3; n++) {
      push.deliver("fast", [target(receiver.url("/fast"))], `{"task":"fast","n":${n}}`);
      push.deliver("slow", [target(receiver.url("/other"))], `{"task":"slow-other","n":${n}}`);
    }

    await receiver.when((r) => r.filter((x) => x.path !== "/stalled").length === 6);
    expect(receiver.bodies("/fast")).toEqual(['{"task":"fast","n":1}', '{"task":"fast","n":2}', '{"task":"fast","n":3}']);
    expect(receiver.bodies("/other")).toHaveLength(3);
    // The stalled lane is still on its first notification.
    expect(receiver.bodies("/stalled")).toEqual(['{"task":"slow"}']);
  });
});

describe("the SSRF guard", () => {
  const refused = [
    "ftp://x",
    "not a url",
    "http://127.0.0.1:1/",
    "http://[::1]/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.0.1/",
    "http://169.254.169.254/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a01:203]/",
    "http://localhost/",
    // IPv6 forms that reach an IPv4 address: NAT64, 6to4, IPv4-compatible and -translated.
    "http://[64:ff9b::a00:1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::169.254.169.254]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:c0a8:101::1]/",
    "http://[::7f00:1]/",
    "http://[::ffff:0:7f00:1]/",
    // Teredo, local-use NAT64, and ranges that are not routed (the documentation ones are left to fail on their own).
    "http://[2001::1]/",
    "http://[64:ff9b:1::1]/",
    "http://192.0.0.1/",
    "http://198.18.0.1/",
    "http://[100::1]/",
  ];

  test.each(refused)("check() refuses %s, naming it", async (url) => {
    const push = start({ allow: [] });
    await expect(push.check(url)).rejects.toThrow(url);
  });

  test("check() says why", async () => {
    const push = start({ allow: [] });
    await expect(push.check("ftp://x")).rejects.toThrow(/http: or https:/);
    await expect(push.check("http://10.1.2.3/")).rejects.toThrow(/private/);
    await expect(push.check("http://[::ffff:127.0.0.1]/")).rejects.toThrow(/loopback/);
    await expect(push.check("http://[64:ff9b::a00:1]/")).rejects.toThrow(/private .*10\.0\.0\.1/);
    // A name: the caller is not told what it resolves to (that would map the agent's network); the cause says.
    const refusal = await push.check("http://localhost/").then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refusal?.message).toMatch(/localhost does not resolve to an address it may be sent to/);
    expect(refusal?.message).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(String((refusal?.cause as Error | undefined)?.message)).toMatch(/localhost resolves to .*loopback/);
    const unknown = await push.check("http://no-such-host.invalid/").then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(unknown?.message).toMatch(/no-such-host\.invalid does not resolve to an address it may be sent to/);
    expect(unknown?.message).not.toMatch(/ENOTFOUND|getaddrinfo/);
  });

  test("embeddedIpv4: the IPv4 address an IPv6 one stands for, by its prefix", () => {
    expect(embeddedIpv4("64:ff9b::a00:1")).toBe("10.0.0.1");
    expect(embeddedIpv4("64:ff9b::192.168.1.1")).toBe("192.168.1.1");
    expect(embeddedIpv4("2002:7f00:1::abcd")).toBe("127.0.0.1");
    expect(embeddedIpv4("::7f00:1")).toBe("127.0.0.1");
    expect(embeddedIpv4("::ffff:0:a9fe:a9fe")).toBe("169.254.169.254");
    for (const none of ["2606:4700::1111", "fe80::1", "::1", "::", "64:ff9b:0:0:0:1:a00:1", "not an address"]) expect(embeddedIpv4(none)).toBeUndefined();
  });

  test("check() refuses a token or authentication that cannot be sent as a header, naming the field", async () => {
    const push = start();
    const url = receiver.url();
    await expect(push.check(url, { token: "a\r\nX-Injected: 1" })).rejects.toThrow(/^token cannot be sent/);
    await expect(push.check(url, { token: "", authentication: { scheme: "Bearer", credentials: "x\ny" } })).rejects.toThrow(/^authentication\.credentials cannot be sent/);
    await expect(push.check(url, { token: "", authentication: { scheme: "Bear er", credentials: "x" } })).rejects.toThrow(/authentication\.scheme "Bear er"/);
    await expect(push.check(url, { token: "t-1", authentication: { scheme: "Bearer", credentials: "abc.def" } })).resolves.toBeUndefined();
  });

  test("check() accepts a public address, and what allow lets through", async () => {
    await expect(start({ allow: [] }).check("https://93.184.216.34/hook")).resolves.toBeUndefined();
    // NAT64 and 6to4 forms of that public address.
    await expect(delivery!.check("https://[64:ff9b::5db8:d822]/hook")).resolves.toBeUndefined();
    await expect(delivery!.check("https://[2002:5db8:d822::1]/hook")).resolves.toBeUndefined();
    await delivery?.close();

    const push = start({ allow: ["127.0.0.0/8", "::1/128", "localhost", "fd00::1"] });
    for (const url of ["http://127.0.0.1:1/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://localhost/", "http://[fd00::1]/"]) {
      await expect(push.check(url)).resolves.toBeUndefined();
    }
    await expect(push.check("http://10.1.2.3/")).rejects.toThrow(/private/);
    await expect(push.check("http://[fd00::2]/")).rejects.toThrow(/unique-local/);
    await expect(push.check("ftp://127.0.0.1/")).rejects.toThrow(/http: or https:/);
  });

  test("a malformed allow entry or option is refused up front", () => {
    expect(() => createPushDelivery({ allow: ["10.0.0.0/33"] })).toThrow(/10\.0\.0\.0\/33/);
    expect(() => createPushDelivery({ allow: ["example.com/8"] })).toThrow(/example\.com\/8/);
    expect(() => createPushDelivery({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => createPushDelivery({ maxQueued: 1.5 })).toThrow(RangeError);
    expect(() => createPushDelivery({ maxConnectionsPerOrigin: 0 })).toThrow(RangeError);
    // Longer than a timer waits: node would fire it after 1 ms, and every attempt would time out at once.
    for (const name of ["timeoutMs", "backoffMs", "maxBackoffMs"] as const) {
      expect(() => createPushDelivery({ [name]: 2 ** 31 })).toThrow(new RangeError(`push delivery: ${name} must be at most 2147483647 ms (about 24.8 days, the longest a timer waits), got 2147483648`));
      expect(() => createPushDelivery({ [name]: Infinity })).toThrow(RangeError);
    }
    expect(() => createPushDelivery({ timeoutMs: 2 ** 31 - 1, maxBackoffMs: 2 ** 31 - 1 })).not.toThrow();
  });

  test("check() refuses credentials in the URL (the client drops them, reports would print them) and a URL over 8192 characters, echoing neither", async () => {
    const push = start();
    const withCredentials = await push.check(receiver.url("/hook").replace("http://", "http://user:s3cret@")).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(withCredentials?.message).toMatch(/^push URL "http:\/\/127\.0\.0\.1:\d+\/hook" must not carry credentials \(user:password@\); a push config sends them as its authentication$/);
    const long = `${receiver.url("/")}${"a".repeat(8192)}`;
    await expect(push.check(long)).rejects.toThrow(new Error(`push URL of ${long.length} characters is too long (at most 8192)`));
    await expect(push.check(receiver.url(`/${"a".repeat(4000)}`))).resolves.toBeUndefined();
  });

  test("delivery refuses a forbidden destination without check(): literal and resolved, no connection made", async () => {
    const push = start({ allow: [], maxAttempts: 3 });
    const literal = receiver.url("/hook", "127.0.0.1");
    const named = receiver.url("/hook", "localhost");
    push.deliver("t1", [target(literal), target(named)], "{}");
    await push.idle();

    expect(receiver.connections).toBe(0);
    expect(receiver.received).toEqual([]);
    expect(errors.map((e) => e.url).sort()).toEqual([literal, named].sort());
    for (const error of errors) {
      expect(error.message).toMatch(/SSRF guard/);
      // A refusal is final: retrying would be refused the same.
      expect(error.message).toMatch(/after 1 attempt:/);
    }
  });

  test("an allowed name is delivered to through the guard's own lookup", async () => {
    const push = start({ allow: ["localhost"] });
    push.deliver("t1", [target(receiver.url("/hook", "localhost"))], "{}");
    await push.idle();
    expect(receiver.received).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});

test("shownUrl leaves out what stands before an @ in a URL's authority, parsing or not", () => {
  expect(shownUrl("http://user:s3cret@hooks.example.com/h?x=1")).toBe("http://hooks.example.com/h?x=1");
  expect(shownUrl("ftp://u:secret@h/path")).toBe("ftp://h/path");
  expect(shownUrl("http://hooks.example.com/a@b")).toBe("http://hooks.example.com/a@b");
  expect(shownUrl("not a url")).toBe("not a url");
});

test("check() of a URL that does not parse, or is not http(s), does not echo its credentials", async () => {
  const push = start();
  await expect(push.check("ftp://u:secret@h/x")).rejects.toThrow('push URL "ftp://h/x" must be http: or https:, not ftp:');
  const bad = await push.check("http://u:secret@[::1/x").then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(bad?.message).toBe('push URL "http://[::1/x" is not a valid URL');
});
