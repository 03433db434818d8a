/**
 * Servers that answer exactly what a test writes, for the client suites
 * that need an agent this project's server would never be (test/client):
 * a node:http server whose answer is a function of the request, and a
 * grpc-js server whose handlers write raw protobuf bytes (its serializers
 * pass Buffers through), so a test can put into an answer fields and enum
 * values no generated code would write. Loopback, ephemeral ports.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { A2AServiceMethods } from "../../generated/a2a_methods.js";

/** A request as the raw HTTP server saw it. */
export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** What the raw HTTP server answers; `chunks` are written one by one (SSE frames, say), then the response ends. */
export interface RawAnswer {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly chunks?: readonly string[];
}

export interface RawHttpServer {
  readonly origin: string;
  /** Every request, in order. */
  readonly requests: RawRequest[];
  close(): Promise<void>;
}

export async function startRawHttp(answer: (request: RawRequest) => RawAnswer): Promise<RawHttpServer> {
  const requests: RawRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const request = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(parts).toString("utf8") };
      requests.push(request);
      const a = answer(request);
      res.writeHead(a.status ?? 200, a.headers);
      for (const chunk of a.chunks ?? []) res.write(chunk);
      res.end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A JSON-RPC answer: the envelope for request `id` with `result`. */
export const jsonRpcResult = (request: RawRequest, result: unknown): RawAnswer => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ jsonrpc: "2.0", id: (JSON.parse(request.body) as { id: unknown }).id, result }),
});

/** A JSON-RPC stream: one SSE frame per result, each in its envelope for request `id`. */
export const jsonRpcStream = (request: RawRequest, results: readonly unknown[]): RawAnswer => {
  const id = (JSON.parse(request.body) as { id: unknown }).id;
  return { headers: { "content-type": "text/event-stream" }, chunks: results.map((result) => `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`) };
};

/** An HTTP+JSON answer: `json` as the body. */
export const jsonAnswer = (json: unknown): RawAnswer => ({ headers: { "content-type": "application/json" }, body: JSON.stringify(json) });

/** An HTTP+JSON stream: one SSE frame per event. */
export const sseAnswer = (events: readonly unknown[]): RawAnswer => ({
  headers: { "content-type": "text/event-stream" },
  chunks: events.map((e) => `data: ${JSON.stringify(e)}\n\n`),
});

/** What a raw gRPC method does: answer bytes (one message, or a stream of them), or fail with a status. */
export type RawGrpcAnswer =
  | { readonly messages: readonly Uint8Array[] }
  | { readonly error: { readonly code: grpc.status; readonly details: string; readonly metadata?: grpc.Metadata } };

export interface RawGrpcServer {
  readonly address: string;
  /** The metadata of every call, in order. */
  readonly calls: { readonly method: string; readonly metadata: grpc.Metadata }[];
  close(): void;
}

const passThrough = (b: Buffer): Buffer => b;

/**
 * A grpc-js server for A2AService whose every method answers what
 * `answer(method)` says, as raw bytes. A unary method sends the first
 * message; a streaming one sends all, then the error if there is one.
 */
export async function startRawGrpc(answer: (method: string) => RawGrpcAnswer): Promise<RawGrpcServer> {
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  const calls: RawGrpcServer["calls"] = [];
  for (const spec of Object.values(A2AServiceMethods)) {
    const streaming = spec.kind !== "unary";
    definition[spec.localName] = {
      path: spec.grpcPath,
      requestStream: false,
      responseStream: streaming,
      requestSerialize: passThrough,
      requestDeserialize: passThrough,
      responseSerialize: passThrough,
      responseDeserialize: passThrough,
    };
    implementation[spec.localName] = streaming
      ? (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
          calls.push({ method: spec.name, metadata: call.metadata });
          const a = answer(spec.name);
          if ("messages" in a) {
            for (const m of a.messages) call.write(Buffer.from(m));
            call.end();
          } else {
            // grpc-js ends a server stream with the status of an "error" event.
            call.emit("error", a.error);
          }
        }
      : (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          calls.push({ method: spec.name, metadata: call.metadata });
          const a = answer(spec.name);
          if ("messages" in a) callback(null, Buffer.from(a.messages[0] ?? new Uint8Array()));
          else callback(a.error, null);
        };
  }
  const server = new grpc.Server();
  server.addService(definition, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err === null ? resolve(p) : reject(err))),
  );
  return { address: `127.0.0.1:${port}`, calls, close: () => server.forceShutdown() };
}
