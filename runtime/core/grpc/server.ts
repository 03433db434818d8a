/**
 * Server plumbing around the generated gRPC service: a grpc-js server with
 * message-size and keepalive settings, binding with TLS or insecure on
 * loopback, the standard health service (npm `grpc-health-check`) and server
 * reflection (npm `@grpc/reflection`) fed from the embedded protobuf-es
 * descriptors. Re-exported by "protoc-gen-a2a/runtime/grpc".
 *
 * `grpc-health-check` and `@grpc/reflection` are optional peer dependencies:
 * they are loaded only when `addHealthService` or `addReflectionService` is
 * called, so a server that uses neither need not install them.
 */
import { createRequire } from "node:module";
import { clone, toBinary } from "@bufbuild/protobuf";
import type { DescFile } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { Server, ServerCredentials, type ServerOptions } from "@grpc/grpc-js";
import { defaultBodyLimit } from "../defaults.js";
import { file_google_rpc_error_details } from "../../gen/google/rpc/error_details_pb.js";
import { file_google_rpc_status } from "../../gen/google/rpc/status_pb.js";

import { checkGrpcOptions, defaultMaxConcurrentStreams, defaultMaxSessionMemoryMb, type GrpcServerOptions, type HealthHandle, type HealthOptions, type ListenOptions, type ServingStatus } from "./server-options.js";

export * from "./server-options.js";

const require = createRequire(import.meta.url);

function load<T>(name: string, why: string): T {
  try {
    return require(name) as T;
  } catch (err) {
    throw new Error(`${why} needs the npm package "${name}" (an optional peer dependency of protoc-gen-a2a): npm install ${name}`, { cause: err });
  }
}

/** The grpc-js channel options for `options` (for callers that build the Server themselves). */
export function grpcServerOptions(options: GrpcServerOptions = {}): ServerOptions {
  checkGrpcOptions(options.serverOptions, "serverOptions");
  const out: ServerOptions = {
    "grpc.max_receive_message_length": options.maxReceiveMessageBytes ?? defaultBodyLimit,
    "grpc.max_send_message_length": options.maxSendMessageBytes ?? defaultBodyLimit,
  };
  if (options.keepalive !== undefined) {
    out["grpc.keepalive_time_ms"] = options.keepalive.timeMs;
    if (options.keepalive.timeoutMs !== undefined) out["grpc.keepalive_timeout_ms"] = options.keepalive.timeoutMs;
  }
  out["grpc.max_concurrent_streams"] = options.maxConcurrentStreams ?? defaultMaxConcurrentStreams;
  out["grpc-node.max_session_memory"] = options.maxSessionMemoryMb ?? defaultMaxSessionMemoryMb;
  // Channelz records every call and connection for a debugging service a server rarely runs:
  // off, as on the clients (D36), unless serverOptions turns it on (D80).
  out["grpc.enable_channelz"] = 0;
  if (options.maxConnectionIdleMs !== undefined) out["grpc.max_connection_idle_ms"] = options.maxConnectionIdleMs;
  if (options.maxConnectionAgeMs !== undefined) out["grpc.max_connection_age_ms"] = options.maxConnectionAgeMs;
  if (options.maxConnectionAgeGraceMs !== undefined) out["grpc.max_connection_age_grace_ms"] = options.maxConnectionAgeGraceMs;
  return { ...out, ...(options.serverOptions as ServerOptions | undefined) };
}

/** A grpc-js server with the message-size, stream and session-memory limits and keepalive settings of `options`. */
export function createGrpcServer(options: GrpcServerOptions = {}): Server {
  return new Server(grpcServerOptions(options));
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "[::1]", "localhost"]);

/** Binds `server` (TLS, or plaintext on loopback) and resolves with the bound port. */
export function listenGrpc(server: Server, options: ListenOptions = {}): Promise<number> {
  const host = options.host ?? "127.0.0.1";
  let credentials: ServerCredentials;
  if (options.tls !== undefined) {
    const { cert, key, clientCa } = options.tls;
    const pem = (v: Buffer | string) => (typeof v === "string" ? Buffer.from(v) : v);
    credentials = ServerCredentials.createSsl(clientCa === undefined ? null : pem(clientCa), [{ cert_chain: pem(cert), private_key: pem(key) }], clientCa !== undefined);
  } else if (options.insecure === true || LOOPBACK.has(host)) {
    credentials = ServerCredentials.createInsecure();
  } else {
    return Promise.reject(new Error(`refusing plaintext gRPC on non-loopback host ${host}: pass tls, or insecure: true`));
  }
  const address = `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${options.port ?? 0}`;
  return new Promise((resolve, reject) => server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve(port))));
}

/** The members of a Watch call (a grpc-js server stream) the handle uses. */
interface WatchCall {
  end(): void;
  once(event: "cancelled" | "finish", listener: () => void): unknown;
}

interface HealthModule {
  HealthImplementation: new (statusMap?: Record<string, ServingStatus>) => {
    setStatus(service: string, status: ServingStatus): void;
    addToServer(server: Pick<Server, "addService">): void;
  };
}

/** Adds the standard grpc.health.v1.Health service (Check and Watch) to `server`. */
export function addHealthService(server: Pick<Server, "addService">, options: HealthOptions = {}): HealthHandle {
  const { HealthImplementation } = load<HealthModule>("grpc-health-check", "addHealthService");
  const names = ["", ...(options.services ?? [])];
  const initial = options.status ?? "SERVING";
  const health = new HealthImplementation(Object.fromEntries(names.map((n) => [n, initial])));
  // The package keeps its Watch calls to itself: they are seen here, on their way in, to be ended.
  const watching = new Set<{ end(): void }>();
  health.addToServer({
    addService(definition, implementation) {
      const watch = implementation.watch as ((call: WatchCall) => void) | undefined;
      const watched = (call: WatchCall) => {
        watching.add(call);
        const leave = () => watching.delete(call);
        call.once("cancelled", leave);
        call.once("finish", leave);
        watch?.(call);
      };
      server.addService(definition, watch === undefined ? implementation : { ...implementation, watch: watched });
    },
  });
  return {
    setStatus: (service, status) => health.setStatus(service, status),
    setAll: (status) => names.forEach((n) => health.setStatus(n, status)),
    endWatches() {
      for (const call of [...watching]) call.end();
      watching.clear();
    },
  };
}

/**
 * `files` and all their transitive imports as FileDescriptorProtos, imports
 * first, each with its `dependency` list (file names) restored from the
 * DescFile graph.
 */
export function fileDescriptorProtos(files: readonly DescFile[]): FileDescriptorProto[] {
  const out: FileDescriptorProto[] = [];
  const seen = new Set<string>();
  const visit = (file: DescFile) => {
    if (seen.has(file.proto.name)) return;
    seen.add(file.proto.name);
    file.dependencies.forEach(visit);
    const proto = clone(FileDescriptorProtoSchema, file.proto);
    proto.dependency = file.dependencies.map((d) => d.proto.name);
    out.push(proto);
  };
  files.forEach(visit);
  return out;
}

/**
 * What `@grpc/reflection`'s ReflectionService reads (a proto-loader
 * PackageDefinition: `fileDescriptorProtos` per entry), built from protobuf-es
 * descriptors rather than .proto files loaded at run time.
 */
export function reflectionPackageDefinition(files: readonly DescFile[]): Record<string, { readonly format: string; readonly type: object; readonly fileDescriptorProtos: Buffer[] }> {
  const encoded = fileDescriptorProtos(files).map((p) => Buffer.from(toBinary(FileDescriptorProtoSchema, p)));
  return { "protoc-gen-a2a.descriptors": { format: "Protocol Buffer 3 DescriptorProto", type: {}, fileDescriptorProtos: encoded } };
}

export interface ReflectionOptions {
  /** Services listed by ListServices. Default: every service in `files`. */
  readonly services?: readonly string[];
  /**
   * Also describe google/rpc/status.proto and error_details.proto, so a
   * reflecting client can decode the ErrorInfo and BadRequest in
   * `grpc-status-details-bin`. Default true.
   */
  readonly errorDetails?: boolean;
}

interface ReflectionModule {
  ReflectionService: new (pkg: object, options?: { services?: string[] }) => { addToServer(server: Pick<Server, "addService">): void };
}

/**
 * Adds gRPC server reflection (grpc.reflection.v1 and v1alpha) describing
 * `files` (e.g. the generated `file_a2a`), their imports and, unless
 * `errorDetails: false`, the google.rpc error detail messages.
 */
export function addReflectionService(server: Pick<Server, "addService">, files: readonly DescFile[], options: ReflectionOptions = {}): void {
  const { ReflectionService } = load<ReflectionModule>("@grpc/reflection", "addReflectionService");
  const services = options.services ?? files.flatMap((f) => f.services.map((s) => s.typeName));
  const described = options.errorDetails === false ? files : [...files, file_google_rpc_status, file_google_rpc_error_details];
  new ReflectionService(reflectionPackageDefinition(described), { services: [...services] }).addToServer(server);
}
