/**
 * Push-notification delivery against a real HTTP receiver on loopback: what
 * arrives (headers, body, order), retries and their backoff, timeouts,
 * redirects, independence of lanes, shutdown, and the SSRF guard both when a
 * config is checked and when a notification is sent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { createPushDelivery, type PushDelivery, type PushDeliveryOptions } from "../../runtime/a2a/tasks/push-delivery.js";

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
let delivery: PushDelivery | undefined;
let errors: { message: string; taskId: string; url: string }[];

function start(options: PushDeliveryOptions = {}): PushDelivery {
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
      ],
      body,
    );
    await push.idle();

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

  test("a 302 is a failure and is not followed", async () => {
    receiver.answer = (req, res) => {
      if (req.path === "/hook") res.writeHead(302, { location: receiver.url("/elsewhere") });
      res.end();
    };
    const push = start({ maxAttempts: 2 });
    push.deliver("t1", [target(receiver.url())], "{}");
    await push.idle();

    expect(receiver.bodies("/hook")).toHaveLength(2);
    expect(receiver.bodies("/elsewhere")).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain("302");
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
    await expect(push.check("http://localhost/")).rejects.toThrow(/localhost resolves to .*loopback/);
  });

  test("check() accepts a public address, and what allow lets through", async () => {
    await expect(start({ allow: [] }).check("https://93.184.216.34/hook")).resolves.toBeUndefined();
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
