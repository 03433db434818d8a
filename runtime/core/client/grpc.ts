/**
 * gRPC calls on @grpc/grpc-js: the method table's paths, messages in
 * protobuf binary through the codecs the server uses (encodeBuffer and
 * decodeBinary find the emitted ones), headers as metadata, the caller's
 * deadline sent as the call's deadline, and a failed status read back with
 * the `google.rpc.Status` of `grpc-status-details-bin`. Loaded only by
 * clients that use gRPC, so JSON-only clients never load grpc-js.
 */
import { Client, Metadata, credentials as grpcCredentials, status as grpcStatus, type ChannelCredentials, type ChannelOptions, type ServiceError } from "@grpc/grpc-js";
import { decodeBinary, encodeBuffer } from "../codec/binary-codec.js";
import { createServiceClient, type ClientErrors, type ClientOf, type ClientTransport, type OutgoingCall } from "./client.js";
import { coreProfileConfig, typed, type ClientOptions, type ClientProfileConfig, type ClientTables, type MethodTable } from "./factories.js";
import { errorFromGrpc } from "./error-decoding.js";

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
}

/** The `host:port` to dial and whether TLS is implied, from an interface URL or address (D28). */
export function grpcTarget(address: string): { target: string; tls: boolean } {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1]?.toLowerCase();
  if (scheme === undefined) return { target: address, tls: /:443$/.test(address) };
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
function streamReset(err: Pick<ServiceError, "code" | "details">): boolean {
  return err.code === grpcStatus.INTERNAL && /^Received RST_STREAM with code \d+/.test(err.details ?? "");
}

export function createGrpcTransport(options: GrpcTransportOptions): ClientTransport {
  const { target, tls } = grpcTarget(options.address);
  const creds = options.credentials ?? (tls ? grpcCredentials.createSsl() : grpcCredentials.createInsecure());
  const client = new Client(target, creds, options.channelOptions);
  const errors = options.errors;

  const metadataOf = (call: OutgoingCall): Metadata => {
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(call.headers)) metadata.set(key, value);
    return metadata;
  };
  const callOptions = (call: OutgoingCall) => (call.deadline === undefined ? {} : { deadline: call.deadline });
  const serialize = (call: OutgoingCall) => (value: object) => encodeBuffer(call.spec.input, value as never);
  const deserialize = (call: OutgoingCall) => (bytes: Buffer) => decodeBinary(call.spec.output, bytes) as object;
  const failure = (err: ServiceError): Error => {
    if (err.code === undefined || err.code === grpcStatus.OK) return err;
    // A stream reset before any gRPC status came: the server did not answer, the stream was cut
    // (nginx's grpc_read_timeout resets it with INTERNAL_ERROR, which grpc-js reports as INTERNAL).
    if (streamReset(err)) return errorFromGrpc(errors, grpcStatus.UNAVAILABLE, `the stream was cut with no gRPC status (${err.details})`, undefined);
    const bin = err.metadata?.get("grpc-status-details-bin")[0];
    return errorFromGrpc(errors, err.code, err.details ?? err.message, typeof bin === "string" ? undefined : bin);
  };
  /** Cancels `cancel` when the call's signal aborts; returns the clean-up. */
  const onAbort = (call: OutgoingCall, cancel: () => void): (() => void) => {
    const signal = call.signal;
    if (signal === undefined) return () => undefined;
    if (signal.aborted) {
      cancel();
      return () => undefined;
    }
    signal.addEventListener("abort", cancel, { once: true });
    return () => signal.removeEventListener("abort", cancel);
  };

  return {
    unary(call) {
      return new Promise<object>((resolve, reject) => {
        let done = () => {};
        const pending = client.makeUnaryRequest(call.spec.grpcPath, serialize(call), deserialize(call), call.request, metadataOf(call), callOptions(call), (err, value) => {
          done();
          if (err !== null) reject(failure(err));
          else resolve(value!);
        });
        done = onAbort(call, () => pending.cancel());
      });
    },

    async *stream(call) {
      const stream = client.makeServerStreamRequest(call.spec.grpcPath, serialize(call), deserialize(call), call.request, metadataOf(call), callOptions(call));
      const done = onAbort(call, () => stream.cancel());
      try {
        for await (const message of stream) yield message as object;
      } catch (err) {
        throw failure(err as ServiceError);
      } finally {
        done();
        // A reader that stops early leaves the call: the server sees it cancelled.
        stream.cancel();
      }
    },

    close: () => client.close(),
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
  const transport = createGrpcTransport({ address, errors: profile.errors, credentials: options.credentials, channelOptions: options.channelOptions });
  return typed(createServiceClient({ methods: tables.methods, transport, profile, headers: options.headers, callHeaders: options.callHeaders, tracing: options.tracing }));
}
