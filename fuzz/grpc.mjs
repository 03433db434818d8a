// gRPC requests for the campaign, over a raw node:http2 client (no grpc-js
// on the client side, so nothing is refused before it reaches the server):
// a valid call of each of the 11 methods (values.mjs's ProtoJSON, its params
// mutated as for the JSON bindings, encoded with protobuf-es), its protobuf
// bytes then mutated (truncated, bit-flipped, extended, bytes inserted,
// lengths broken), in a real gRPC length-prefixed frame that may itself be
// wrong (declared length, compressed flag, none or two messages, split in
// pieces, trailing bytes), with mutated metadata (a2a-version, authorization,
// grpc-timeout, content-type, grpc-encoding, a2a-extensions, -bin values)
// and paths; and the oracle: no INTERNAL (13) or UNKNOWN (2) status.
import { connect, constants } from "node:http2";
import fc from "fast-check";
import { fromJson, toBinary, create } from "@bufbuild/protobuf";
import { A2AServiceMethods } from "./.build/generated/a2a_methods.js";
import { applyMutations, expandDeep, mutation } from "./mutate.mjs";
import { resolvePool, validCall } from "./values.mjs";

export const name = "grpc";

const byName = Object.fromEntries(Object.values(A2AServiceMethods).map((m) => [m.name, m]));

const byteOp = fc.record({
  op: fc.constantFrom("truncate", "flip", "extend", "insert", "varint", "tag"),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
  bytes: fc.uint8Array({ maxLength: 12 }),
});

export const arbitrary = fc.record({
  call: validCall,
  mutations: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }) }),
  bytes: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 3, arbitrary: fc.array(byteOp, { minLength: 1, maxLength: 3 }) }),
  frame: fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("length+", "length-", "length-huge", "flag", "none", "two", "split", "trailing", "header-only"), n: fc.integer({ min: 1, max: 300 }), flag: fc.constantFrom(1, 2, 128, 255) }) },
  ),
  path: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("/lf.a2a.v1.A2AService/Nope", "/lf.a2a.v1.A2AService/", "/a2a.v1.A2AService/SendMessage", "/lf.a2a.v1.A2AService/sendmessage", "/", "/lf.a2a.v1.A2AService/SendMessage/x", "/grpc.health.v1.Health/Check") }),
  version: fc.oneof({ weight: 12, arbitrary: fc.constant("1.0") }, { weight: 1, arbitrary: fc.constantFrom(undefined, "0.3", "1.1", "garbage", "") }),
  auth: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("Bearer demo", "Bearer wrong", "") }),
  timeout: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("1S", "100m", "0n", "99999999H", "1", "abc", "-1S", "") }),
  contentType: fc.oneof({ weight: 12, arbitrary: fc.constant("application/grpc") }, { weight: 1, arbitrary: fc.constantFrom("application/grpc+proto", "application/grpc+json", "application/grpc-web", "application/json", "text/plain", "application/grpcx") }),
  encoding: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("identity", "gzip", "deflate", "br", "snappy") }),
  extensions: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("https://example.invalid/ext/v1", ",,", "a, b") }),
  binHeader: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("AAEC", "!!!", "", "grpc-status-details-bin") }),
});

function encode(method, params) {
  const schema = method.input;
  try {
    return toBinary(schema, fromJson(schema, params, { ignoreUnknownFields: true }));
  } catch {
    return undefined;
  }
}

function mutateBytes(bytes, ops) {
  let b = Buffer.from(bytes);
  for (const o of ops) {
    const at = b.length === 0 ? 0 : o.at % (b.length + 1);
    switch (o.op) {
      case "truncate":
        b = b.subarray(0, at);
        break;
      case "flip":
        if (b.length > 0) b[at % b.length] ^= 1 << (o.byte % 8);
        break;
      case "extend":
        b = Buffer.concat([b, Buffer.from(o.bytes)]);
        break;
      case "insert":
        b = Buffer.concat([b.subarray(0, at), Buffer.from(o.bytes), b.subarray(at)]);
        break;
      case "varint":
        // A length or varint that never ends, or claims more than there is.
        b = Buffer.concat([b.subarray(0, at), Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]), b.subarray(at)]);
        break;
      case "tag":
        // A field with a wire type the schema does not use for it, or an invalid one (6, 7), or field 0.
        b = Buffer.concat([b.subarray(0, at), Buffer.from([o.byte & 0x07 ? o.byte : 0x07]), b.subarray(at)]);
        break;
    }
  }
  return b;
}

function frameOf(message, f) {
  const header = (len, flag = 0) => {
    const h = Buffer.alloc(5);
    h[0] = flag;
    h.writeUInt32BE(len >>> 0, 1);
    return h;
  };
  if (f === undefined) return [Buffer.concat([header(message.length), message])];
  switch (f.kind) {
    case "length+":
      return [Buffer.concat([header(message.length + f.n), message])];
    case "length-":
      return [Buffer.concat([header(Math.max(0, message.length - f.n)), message])];
    case "length-huge":
      return [Buffer.concat([header(0xffffffff - f.n), message])];
    case "flag":
      return [Buffer.concat([header(message.length, f.flag), message])];
    case "none":
      return [];
    case "two":
      return [Buffer.concat([header(message.length), message, header(message.length), message])];
    case "split": {
      const all = Buffer.concat([header(message.length), message]);
      const cut = f.n % (all.length + 1);
      return [all.subarray(0, cut), all.subarray(cut)];
    }
    case "trailing":
      return [Buffer.concat([header(message.length), message, Buffer.from([0, 0, 0])])];
    case "header-only":
      return [header(message.length + f.n)];
  }
  return [];
}

export function requestOf(v, pool) {
  const method = byName[v.call.method];
  const params = resolvePool(v.call.params, pool);
  const mutated = v.mutations.length === 0 ? undefined : expandDeep(resolvePool(applyMutations(v.call.params, v.mutations), pool));
  // A mutated request that is still a message of its type is sent as that; else the valid one.
  const message = (mutated === undefined ? undefined : encode(method, mutated)) ?? encode(method, params) ?? toBinary(method.input, create(method.input));
  const bytes = mutateBytes(message, v.bytes);
  const headers = { ":method": "POST", ":path": v.path ?? method.grpcPath, "content-type": v.contentType, te: "trailers" };
  if (v.version !== undefined) headers["a2a-version"] = v.version;
  if (v.auth !== undefined) headers.authorization = v.auth;
  if (v.timeout !== undefined) headers["grpc-timeout"] = v.timeout;
  if (v.encoding !== undefined) headers["grpc-encoding"] = v.encoding;
  if (v.extensions !== undefined) headers["a2a-extensions"] = v.extensions;
  if (v.binHeader !== undefined) headers["x-fuzz-bin"] = v.binHeader;
  return { headers, frames: frameOf(bytes, v.frame), method: v.call.method };
}

/** A few HTTP/2 sessions to the gRPC port, replaced when one closes. */
function sessions(port, n) {
  const list = [];
  const make = (i) => {
    const s = connect(`http://127.0.0.1:${port}`);
    s.on("error", () => undefined);
    s.on("close", () => {
      if (list[i] === s && !closed) list[i] = make(i);
    });
    return s;
  };
  let closed = false;
  for (let i = 0; i < n; i++) list.push(make(i));
  let next = 0;
  return {
    get: () => {
      const i = next++ % n;
      if (list[i].destroyed || list[i].closed) list[i] = make(i);
      return list[i];
    },
    close: () => {
      closed = true;
      for (const s of list) s.destroy();
    },
  };
}

/** One call: { httpStatus, grpcStatus, message, messages, reset, cut }; a stream still open after streamMs is cancelled. */
function call(session, request, timeoutMs, streamMs = 500) {
  return new Promise((resolve, reject) => {
    const out = { httpStatus: undefined, grpcStatus: undefined, grpcMessage: undefined, bytes: 0, reset: undefined, cut: false };
    let stream;
    try {
      stream = session.request(request.headers);
    } catch (e) {
      reject(e);
      return;
    }
    const streamTimer = setTimeout(() => {
      out.cut = true;
      stream.close(constants.NGHTTP2_CANCEL);
    }, streamMs);
    const hardTimer = setTimeout(() => reject(Object.assign(new Error("no answer"), { code: "HANG" })), timeoutMs);
    stream.on("response", (h) => {
      out.httpStatus = h[":status"];
      if (h["grpc-status"] !== undefined) {
        out.grpcStatus = Number(h["grpc-status"]);
        out.grpcMessage = h["grpc-message"];
      }
    });
    stream.on("trailers", (t) => {
      if (t["grpc-status"] !== undefined) {
        out.grpcStatus = Number(t["grpc-status"]);
        out.grpcMessage = t["grpc-message"];
      }
    });
    stream.on("data", (d) => {
      out.bytes += d.length;
    });
    stream.on("error", () => undefined);
    stream.on("close", () => {
      clearTimeout(streamTimer);
      clearTimeout(hardTimer);
      if (out.grpcStatus === undefined && !out.cut) out.reset = stream.rstCode;
      resolve(out);
    });
    for (const f of request.frames) stream.write(f);
    stream.end();
  });
}

const statusNames = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];

/**
 * grpc-js's own INTERNAL answers, sent before any of our code runs: a
 * malformed grpc-timeout header (grpc-go answers the same), and a message
 * that does not decompress with the encoding it names (gRPC's status code
 * table prescribes INTERNAL for that). Counted apart, not findings (D90).
 */
function grpcJsOwn(answer) {
  if (answer.grpcStatus !== 13 || typeof answer.grpcMessage !== "string") return false;
  const message = decodeURIComponent(answer.grpcMessage);
  return message.startsWith("Invalid grpc-timeout value") || message === "Failed to decompress message";
}

export function open(server, ctx) {
  const pool = sessions(server.grpcPort, 4);
  return {
    build: (value) => requestOf(value, ctx.pool),
    send: (request) => call(pool.get(), request, ctx.timeoutMs),
    judge(answer) {
      if (grpcJsOwn(answer)) return undefined;
      if (answer.grpcStatus === 13 || answer.grpcStatus === 2) return `gRPC ${statusNames[answer.grpcStatus]}: ${answer.grpcMessage ?? ""}`;
      if (answer.httpStatus >= 500) return `HTTP ${answer.httpStatus}`;
      return undefined;
    },
    kind: (a) => (grpcJsOwn(a) ? `INTERNAL from grpc-js: ${decodeURIComponent(a.grpcMessage).startsWith("Invalid grpc-timeout") ? "malformed grpc-timeout" : "message does not decompress"} (D90; not a finding)` : a.cut ? "stream cut after 500 ms" : a.grpcStatus !== undefined ? statusNames[a.grpcStatus] ?? `status ${a.grpcStatus}` : a.reset !== undefined ? `reset ${a.reset} (HTTP ${a.httpStatus})` : `HTTP ${a.httpStatus}`),
    printable: (r) => ({ headers: r.headers, frames: r.frames.map((f) => f.toString("hex")) }),
    printableAnswer: (a) => a,
    close: () => pool.close(),
  };
}
