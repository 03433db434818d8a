/**
 * Every name the plugin gives to a generated file or declaration, decided in
 * one place so emitters and tests never spell one themselves.
 */
import { posix } from "node:path";
import type { DescFile, DescMethod, DescService } from "@bufbuild/protobuf";

export const names = {
  /** `a2a_handler.ts` beside protoc-gen-es's `a2a_pb.ts`. */
  handlerFile: (file: DescFile) => `${file.name}_handler.ts`,
  methodsFile: (file: DescFile) => `${file.name}_methods.ts`,
  jsonRpcFile: (file: DescFile) => `${file.name}_jsonrpc.ts`,
  httpJsonFile: (file: DescFile) => `${file.name}_http.ts`,
  grpcFile: (file: DescFile) => `${file.name}_grpc.ts`,
  serverFile: (file: DescFile) => `${file.name}_server.ts`,
  /** `a2a_client.ts`: the typed clients of the file's services over the JSON bindings, and from a card (A2AService). */
  clientFile: (file: DescFile) => `${file.name}_client.ts`,
  /** `a2a_tasks.ts`: the task runtime typed with the file's messages (A2AService only). */
  tasksFile: (file: DescFile) => `${file.name}_tasks.ts`,
  /**
   * `a2a_codec.ts`: the message codecs specialised at build time, for every
   * proto file that declares a message some service of the run reads or
   * writes (google/protobuf/struct.proto's included, beside where its
   * `_pb.ts` would be).
   */
  codecFile: (file: DescFile) => `${file.name}_codec.ts`,
  /** `a2aCodecs`: the list of a codec file's codecs (and of those it imports), which the method table registers. */
  codecList: (file: DescFile) => `${lowerCamel(posix.basename(file.name, ".proto"))}Codecs`,
  /**
   * What the codec file names for one message, from protoc-gen-es's name
   * of its shape (`Task`, `Task_Status`): `writeTask`, `readTask`,
   * `readTaskGroup` (a group's fields, up to its end tag), `newTask` (a zero
   * message), `writeTaskJson` (ProtoJSON) and `TaskCodec` (all of them, as
   * the runtime takes them).
   */
  codecFunctions: (shape: string) => ({
    write: `write${shape}`,
    read: `read${shape}`,
    readGroup: `read${shape}Group`,
    zero: `new${shape}`,
    toJson: `write${shape}Json`,
    codec: `${shape}Codec`,
  }),
  /**
   * `a2aCodecs_0`: a part of a long exported list (printList in emit/shared.ts). protoplugin's
   * aliases and salts end in `$` or `$<n>`, and a nested type's own name cannot begin with a
   * digit, so only a message named `a2aCodecs_0` itself could take it.
   */
  listPart: (list: string, i: number) => `${list}_${i}`,
  /** How one generated file imports another: relative to the output root, as protoplugin wants. */
  importPath: (generatedFile: string) => `./${generatedFile.replace(/\.ts$/, ".js")}`,
  /**
   * `sendMessage`: an RPC's name in the handler interface, the method table (its key and
   * `localName`, which the runtime calls the handler and builds the clients by), the HTTP rules,
   * the gRPC definition and the clients (D118). protobuf-es's localName (which already escapes
   * `constructor`, `toString`, `toJSON` and `valueOf` as `constructor$`...), with a `$` added where
   * it is a name of the object itself: `close` (every client's own, and the task handler's),
   * `then` (an object with a then method is taken for a promise: `await`ed or returned from an
   * async function, a client or handler would call the RPC), `__proto__` (an object literal's
   * prototype). The JSON-RPC method and the gRPC path keep the RPC's proto name.
   */
  handlerMethod: (method: DescMethod) => (reservedMembers.has(method.localName) ? `${method.localName}$` : method.localName),
  /** `A2AServiceHandler`: the interface an agent implements. */
  handler: (service: DescService) => `${service.name}Handler`,
  /** `A2AServiceMethods`: one entry per RPC, keyed by the handler's method name. */
  methodTable: (service: DescService) => `${service.name}Methods`,
  /** `A2AServiceHttpRules`: every google.api.http rule in route precedence order. */
  httpRules: (service: DescService) => `${service.name}HttpRules`,
  /** `A2AServiceRequiredFields`: REQUIRED fields of the service's messages. */
  requiredFields: (service: DescService) => `${service.name}RequiredFields`,
  /** `A2AServiceJsonRpcMethods`: the JSON-RPC dispatch table, keyed by method name. */
  jsonRpcTable: (service: DescService) => `${service.name}JsonRpcMethods`,
  /** `createA2AServiceJsonRpcEndpoint`: the typed factory of the JSON-RPC core. */
  jsonRpcEndpoint: (service: DescService) => `create${service.name}JsonRpcEndpoint`,
  /** `createA2AServiceJsonRpcListener`: the same as a node:http request listener. */
  jsonRpcListener: (service: DescService) => `create${service.name}JsonRpcListener`,
  /** `createA2AServiceHttpJsonEndpoint`: the typed factory of the HTTP+JSON core. */
  httpJsonEndpoint: (service: DescService) => `create${service.name}HttpJsonEndpoint`,
  /** `createA2AServiceHttpJsonListener`: the same as a node:http request listener. */
  httpJsonListener: (service: DescService) => `create${service.name}HttpJsonListener`,
  /** `A2AServiceGrpcDefinition`: the @grpc/grpc-js service definition. */
  grpcDefinition: (service: DescService) => `${service.name}GrpcDefinition`,
  /** `addA2AServiceToServer`: adds a handler for the service to a grpc.Server. */
  grpcAdd: (service: DescService) => `add${service.name}ToServer`,
  /** `A2AServiceClient`: the handler's shape for callers, every method required. */
  client: (service: DescService) => `${service.name}Client`,
  /** `A2AServiceClientTables`: what the runtime's client factories take. */
  clientTables: (service: DescService) => `${service.name}ClientTables`,
  /** `createA2AServiceJsonRpcClient`: a client over JSON-RPC at a URL. */
  jsonRpcClient: (service: DescService) => `create${service.name}JsonRpcClient`,
  /** `createA2AServiceHttpJsonClient`: a client over HTTP+JSON at a base URL. */
  httpJsonClient: (service: DescService) => `create${service.name}HttpJsonClient`,
  /** `createA2AServiceGrpcClient`: a client over gRPC at an address (in the gRPC file). */
  grpcClient: (service: DescService) => `create${service.name}GrpcClient`,
  /** `createA2AServiceClient`: a client from an Agent Card, over its first usable interface. */
  cardClient: (service: DescService) => `create${service.name}Client`,
  /** `followA2AServiceTask`: stream recovery (D30) with the file's own StreamResponse. */
  followTask: (service: DescService) => `follow${service.name}Task`,
  /** The runtime's entry for generated code. */
  internalRuntime: (runtimeImport: string) => runtimeEntry(runtimeImport, "internal"),
  /** The runtime's gRPC entry point, kept apart so JSON-only agents never load grpc-js. */
  grpcRuntime: (runtimeImport: string) => runtimeEntry(runtimeImport, "grpc"),
  /** The runtime's all-bindings server, which loads grpc-js too. */
  serverRuntime: (runtimeImport: string) => runtimeEntry(runtimeImport, "server"),
  /** `serveA2AService`: one call serving an agent on every binding. */
  serve: (service: DescService) => `serve${service.name}`,
  /** `createA2AServiceTaskHandler`: an executor and a store made into the whole handler. */
  taskHandlerFactory: (service: DescService) => `create${service.name}TaskHandler`,
  /** `A2AServiceTaskHandler`: what that factory returns. */
  taskHandler: (service: DescService) => `${service.name}TaskHandler`,
  /** `A2AServiceExecutor`: the one function an agent writes. */
  executor: (service: DescService) => `${service.name}Executor`,
  /** `A2AServiceRequestContext`: what the executor is called with. */
  requestContext: (service: DescService) => `${service.name}RequestContext`,
  /** `A2AServiceEvent`: what the executor yields. */
  taskEvent: (service: DescService) => `${service.name}Event`,
  /** `A2AServiceTaskTypes`: the service's messages as the task runtime's type parameters. */
  taskTypes: (service: DescService) => `${service.name}TaskTypes`,
} as const;

/** The handler's and clients' own members, which no RPC may take (names.handlerMethod). */
const reservedMembers: ReadonlySet<string> = new Set(["close", "then", "__proto__"]);

/**
 * `name` as the key of an object literal's property: `["__proto__"]` for `__proto__`, which written
 * `__proto__:` or `"__proto__":` would set the object's prototype instead (D118); else `name` itself
 * as `quote` makes it (a JSON-RPC method is an identifier, a message type name is quoted).
 */
export function propertyKey<Quoted = string>(name: string, quote?: (name: string) => Quoted): string | Quoted {
  if (name === "__proto__") return `[${JSON.stringify(name)}]`;
  return quote === undefined ? name : quote(name);
}

/**
 * The globals generated code names, each written as `globalThis.<name>` (D118): protoc-gen-es
 * names a message's shape as the message (`Promise`, `URL`, `Error`), so in a file importing that
 * shape the bare name is the message. `Object` and `Uint8Array` are written bare: protoplugin's
 * safeIdentifier escapes them in every name it gives (`Object$`), so no import takes them.
 * test/plugin/names.test.ts finds any other global a generated file names bare.
 */
export const globals = {
  Promise: "globalThis.Promise",
  AsyncIterable: "globalThis.AsyncIterable",
  Iterable: "globalThis.Iterable",
  Buffer: "globalThis.Buffer",
  URL: "globalThis.URL",
  Record: "globalThis.Record",
  Error: "globalThis.Error",
  String: "globalThis.String",
} as const;

/**
 * A runtime entry beside the main one: `protoc-gen-a2a/runtime` gives
 * `protoc-gen-a2a/runtime/grpc`; a file such as `./rt/index.js` gives
 * `./rt/grpc.js`, the layout of this package's runtime/ folder.
 */
function runtimeEntry(runtimeImport: string, entry: "internal" | "grpc" | "server"): string {
  const file = /\/index(\.[cm]?[jt]s)?$/.exec(runtimeImport);
  if (file !== null) return `${runtimeImport.slice(0, file.index)}/${entry}${file[1] ?? ""}`;
  return `${runtimeImport}/${entry}`;
}

/** `a2a` -> `a2a`, `library-v1` -> `libraryV1`: an identifier from a file's base name. */
function lowerCamel(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  const joined = words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join("");
  return /^[0-9]/.test(joined) || joined === "" ? `_${joined}` : joined;
}
