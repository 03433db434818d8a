/**
 * gRPC calls on @grpc/grpc-js: the method table's paths, messages in
 * protobuf binary through the codecs the server uses (encodeBuffer and
 * decodeBinary find the emitted ones), headers as metadata, the caller's
 * deadline sent as the call's deadline, and a failed status read back with
 * the `google.rpc.Status` of `grpc-status-details-bin`. Loaded only by
 * clients that use gRPC, so JSON-only clients never load grpc-js.
 */
import { Client, Metadata, connectivityState, credentials as grpcCredentials, status as grpcStatus, type Channel, type ChannelCredentials, type ChannelOptions, type StatusObject } from "@grpc/grpc-js";
import { decodeBinary, encodeBuffer } from "../codec/binary-codec.js";
import { createServiceClient, type ClientErrors, type ClientOf, type ClientTransport, type OutgoingCall } from "./client.js";
import { coreProfileConfig, typed, type ClientOptions, type ClientProfileConfig, type ClientTables, type MethodTable } from "./factories.js";
import { errorFromGrpc } from "./error-decoding.js";
import { checkGrpcOptions } from "../grpc/server-options.js";
import { bodyBoundsOf } from "./bounds.js";

export interface GrpcTransportOptions {
  /**
   * Where the server is: `host:port`, or a URL whose host and port are used
   * (`https://` and `grpcs://` mean TLS, `http://` and `grpc://` plaintext;
   * a path is ignored: gRPC routes by method path alone). D28.
   */
  readonly address: string;
  readonly errors: ClientErrors;
  /** Default: TLS for https, grpcs or port 443, plaintext otherwise. */
  readonly credentials?: ChannelCredentials;
  /** grpc-js channel options, e.g. `grpc.keepalive_time_ms`. */
  readonly channelOptions?: ChannelOptions;
  /** The largest answer message: `grpc.max_receive_message_length` unless `channelOptions` set it (grpc-js's default 4 MiB). */
  readonly maxMessageBytes?: number;
}

/** The name-resolver schemes of gRPC's target syntax, which grpc-js reads itself. */
const grpcTargetSchemes: ReadonlySet<string> = new Set(["dns", "unix", "unix-abstract", "ipv4", "ipv6"]);

/** The `host:port` to dial and whether TLS is implied, from an interface URL or address (D28). */
export function grpcTarget(address: string): { target: string; tls: boolean } {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1]?.toLowerCase();
  // grpc-js's own target syntax (dns:///host:port, unix:///path, ipv4:, ipv6:) is its to read: as a
  // URL, dns:///h:443 has no host, and was dialled as ":80".
  if (scheme === undefined || grpcTargetSchemes.has(scheme)) return { target: address, tls: /:443$/.test(address) };
  const url = new URL(address);
  const tls = scheme === "https" || scheme === "grpcs";
  const port = url.port !== "" ? url.port : tls ? "443" : "80";
  return { target: `${url.hostname}:${port}`, tls: tls || port === "443" };
}

/**
 * Whether grpc-js failed a call because its HTTP/2 stream was reset before
 * any gRPC status arrived (a status, even INTERNAL, comes in trailers and
 * then the reset is ignored). grpc-js reports most reset codes as INTERNAL
 * and keeps the code only in this text, "Received RST_STREAM with code N",
 * which it keeps stable on purpose; CANCEL, REFUSED_STREAM and
 * ENHANCE_YOUR_CALM it maps itself (CANCELLED, UNAVAILABLE, RESOURCE_EXHAUSTED).
 * (An INTERNAL status whose own message began with that text would be taken
 * for a reset: grpc-js gives nothing else to tell them apart by.)
 */
function streamReset(err: Pick<StatusObject, "code" | "details">): boolean {
  return err.code === grpcStatus.INTERNAL && /^Received RST_STREAM with code \d+/.test(err.details ?? "");
}

export function createGrpcTransport(options: GrpcTransportOptions): ClientTransport {
  const { target, tls } = grpcTarget(options.address);
  const creds = options.credentials ?? (tls ? grpcCredentials.createSsl() : grpcCredentials.createInsecure());
  // Channelz keeps a record of every call for a debugging service a client
  // rarely runs; off unless asked for (D36). grpc-js's reconnection backoff (1 s, x1.6, up to
  // 120 s) is bounded by stream recovery's (200 ms, doubled, up to 5 s; D30): between attempts the
  // channel fails every call at once, and recovery gave up while the agent was back.
  checkGrpcOptions(options.channelOptions, "channelOptions");
  // Checked as the JSON bindings check it: grpc-js takes -1 for no limit, and 0 as it comes.
  if (options.maxMessageBytes !== undefined) bodyBoundsOf({ maxMessageBytes: options.maxMessageBytes });
  const client = new Client(target, creds, {
    "grpc.enable_channelz": 0,
    "grpc.initial_reconnect_backoff_ms": 200,
    "grpc.max_reconnect_backoff_ms": 5_000,
    ...(options.maxMessageBytes === undefined ? {} : { "grpc.max_receive_message_length": options.maxMessageBytes === Infinity ? -1 : options.maxMessageBytes }),
    ...options.channelOptions,
  });
  const channel = client.getChannel();
  const errors = options.errors;

  const metadataOf = (call: OutgoingCall): Metadata => {
    const metadata = new Metadata();
    for (const key in call.headers) metadata.set(key, call.headers[key]!);
    return metadata;
  };
  const failure = (status: StatusObject): Error => {
    // A stream reset before any gRPC status came: the server did not answer, the stream was cut
    // (nginx's grpc_read_timeout resets it with INTERNAL_ERROR, which grpc-js reports as INTERNAL).
    if (streamReset(status)) return errorFromGrpc(errors, grpcStatus.UNAVAILABLE, `the stream was cut with no gRPC status (${status.details})`, undefined);
    const bin = status.metadata?.get("grpc-status-details-bin")[0];
    return errorFromGrpc(errors, status.code, status.details, typeof bin === "string" ? undefined : bin);
  };

  /**
   * Starts `call` on the channel itself (grpc-js's Channel.createCall), below
   * the Client's interceptor layer and its per-call stack capture: the
   * caller's deadline, signal and message codecs are all this transport
   * needs of that layer, and the layer was most of a call's client CPU
   * (D36). Sends the one request message and half-closes; `listener` gets
   * the raw response messages (one per startRead) and the status.
   */
  const start = (call: OutgoingCall, listener: { message(bytes: Buffer): void; status(status: StatusObject): void }): GrpcCall => {
    const grpcCall = channel.createCall(call.spec.grpcPath, call.deadline ?? Infinity, undefined, null, undefined);
    let stopListening: () => void = noop;
    grpcCall.start(metadataOf(call), {
      onReceiveMetadata: noop,
      onReceiveMessage: (bytes: Buffer) => listener.message(bytes),
      onReceiveStatus: (status) => {
        stopListening();
        listener.status(status);
      },
    });
    const signal = call.signal;
    if (signal !== undefined) {
      const cancel = () => grpcCall.cancelWithStatus(grpcStatus.CANCELLED, "Cancelled on client");
      if (signal.aborted) cancel();
      else {
        signal.addEventListener("abort", cancel, { once: true });
        stopListening = () => signal.removeEventListener("abort", cancel);
      }
    }
    let bytes: Buffer;
    try {
      bytes = encodeBuffer(call.spec.input, call.request as never);
    } catch (err) {
      grpcCall.cancelWithStatus(grpcStatus.INTERNAL, `Request message serialization failure: ${(err as Error).message}`);
      return grpcCall;
    }
    grpcCall.sendMessageWithContext({}, bytes);
    grpcCall.halfClose();
    return grpcCall;
  };
  /** The response message, or the INTERNAL status grpc-js would give for bytes that are not one. */
  const decode = (call: OutgoingCall, grpcCall: GrpcCall, bytes: Buffer): object | undefined => {
    try {
      return decodeBinary(call.spec.output, bytes) as object;
    } catch (err) {
      grpcCall.cancelWithStatus(grpcStatus.INTERNAL, `Response message parsing error: ${(err as Error).message}`);
      return undefined;
    }
  };

  return {
    unary(call) {
      return new Promise<object>((resolve, reject) => {
        let response: object | undefined;
        let count = 0;
        const grpcCall: GrpcCall = start(call, {
          message(bytes) {
            // A second response message is a cardinality violation, UNIMPLEMENTED as gRPC's
            // status codes say; reading on after the first is what lets one be seen at all
            // (grpc-js holds an unread message, and an OK status behind it, forever).
            if (++count > 1) grpcCall.cancelWithStatus(grpcStatus.UNIMPLEMENTED, "Too many responses received");
            else {
              response = decode(call, grpcCall, bytes);
              grpcCall.startRead();
            }
          },
          status(status) {
            if (status.code !== grpcStatus.OK) reject(failure(status));
            else if (response === undefined) reject(failure({ code: grpcStatus.UNIMPLEMENTED, details: "No message received", metadata: status.metadata }));
            else resolve(response);
          },
        });
        grpcCall.startRead();
      });
    },

    stream(call) {
      return grpcStream(call, start, decode, failure);
    },

    close: () => client.close(),

    waitForConnection(timeoutMs, signal) {
      if (timeoutMs <= 0 || signal?.aborted === true || channel.getConnectivityState(false) !== connectivityState.TRANSIENT_FAILURE) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        // Our own timer, cleared when the wait ends: grpc-js's deadline timer cannot be cancelled, and held the process open after an abort (review).
        const timer = setTimeout(done, timeoutMs);
        signal?.addEventListener("abort", done, { once: true });
        try {
          // Called at the first change (CONNECTING, READY or IDLE); with no deadline of its own, it sets no timer.
          channel.watchConnectivityState(connectivityState.TRANSIENT_FAILURE, Infinity, done);
        } catch {
          done(); // The channel is closed.
        }
      });
    },
  };
}

type GrpcCall = ReturnType<Channel["createCall"]>;
type StartCall = (call: OutgoingCall, listener: { message(bytes: Buffer): void; status(status: StatusObject): void }) => GrpcCall;

const noop = () => {};

/**
 * A server stream as an async iterable that reads one message ahead at
 * most: the next message is asked of grpc-js (startRead) only when the
 * reader wants one, so a slow reader holds the server back through HTTP/2
 * flow control instead of buffering its stream here. A reader that stops
 * early cancels the call (the server sees CANCELLED).
 */
function grpcStream(
  call: OutgoingCall,
  start: StartCall,
  decode: (call: OutgoingCall, grpcCall: GrpcCall, bytes: Buffer) => object | undefined,
  failure: (status: StatusObject) => Error,
): AsyncIterable<object> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<object> {
      let ready: object | undefined;
      let ended: StatusObject | undefined;
      let waiting: { resolve(r: IteratorResult<object>): void; reject(e: Error): void } | undefined;
      let finished = false;
      const settle = () => {
        const w = waiting;
        if (w === undefined) return;
        if (ready !== undefined) {
          const value = ready;
          ready = undefined;
          waiting = undefined;
          w.resolve({ value, done: false });
        } else if (ended !== undefined) {
          waiting = undefined;
          finished = true;
          if (ended.code === grpcStatus.OK) w.resolve({ value: undefined, done: true });
          else w.reject(failure(ended));
        }
      };
      const grpcCall = start(call, {
        message(bytes) {
          const value = decode(call, grpcCall, bytes);
          if (value === undefined) return;
          ready = value;
          settle();
        },
        status(status) {
          ended = status;
          settle();
        },
      });
      const stop = (): IteratorResult<object> => {
        if (!finished) {
          finished = true;
          if (ended === undefined) grpcCall.cancelWithStatus(grpcStatus.CANCELLED, "Cancelled on client");
        }
        return { value: undefined, done: true };
      };
      return {
        next() {
          if (finished) return Promise.resolve({ value: undefined, done: true });
          return new Promise<IteratorResult<object>>((resolve, reject) => {
            waiting = { resolve, reject };
            if (ready === undefined && ended === undefined) grpcCall.startRead();
            else settle();
          });
        },
        return: () => Promise.resolve(stop()),
        throw: (err: unknown) => {
          stop();
          return Promise.reject(err);
        },
      };
    },
  };
}

/** The options of a gRPC client: every client's, and the channel's. */
export type GrpcClientOptions = ClientOptions & Omit<GrpcTransportOptions, "address" | "errors">;

/** A gRPC client of a service's method table, under `profile` (the core's when absent). */
export function createGrpcClient<M extends MethodTable>(
  tables: Pick<ClientTables<M>, "methods">,
  address: string,
  options: GrpcClientOptions & Partial<ClientProfileConfig> = {},
): ClientOf<M> {
  const { profile } = { ...coreProfileConfig, ...options };
  const transport = createGrpcTransport({
    address,
    errors: profile.errors,
    credentials: options.credentials,
    channelOptions: options.channelOptions,
    maxMessageBytes: options.maxMessageBytes,
  });
  return typed(createServiceClient({ methods: tables.methods, transport, profile, headers: options.headers, callHeaders: options.callHeaders, tracing: options.tracing }));
}
