import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { globals, names } from "../names.js";
import { docLines, localImport } from "./shared.js";
import { importSchema, importShape } from "./type-imports.js";

/**
 * The typed clients of each service over the JSON bindings: the handler's
 * methods for callers (a request or its init shape in, the response or
 * its stream out), from the same tables the server dispatches on. A2AService
 * (D21) gets the A2A profile (version, extensions, tenant, its error
 * classes), a client made from an Agent Card and stream recovery (D30).
 * gRPC's factory is in the gRPC file, so a JSON-only client never loads
 * grpc-js.
 */
export function emitClient(f: GeneratedFile, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  const initShape = f.import("MessageInitShape", "@bufbuild/protobuf", true);
  for (const s of services) {
    const serviceName = s.desc.typeName;
    const callOptions = [f.import("ClientCallOptions", internal, true), " | ", f.import(s.a2a === undefined ? "CallContext" : "A2ACallContext", internal, true)];
    f.print(
      docLines(f, [
        `A client of ${serviceName}: the methods of \`${names.handler(s.desc)}\` for callers, on`,
        `any binding. A unary method answers the response message; a streaming one`,
        `yields its messages. A failed call rejects with the error the server raised,`,
        `as the same class, or with UNAVAILABLE, CANCELLED or DEADLINE_EXCEEDED`,
        `when no answer came (D29).`,
        ``,
        `A client is also a \`${names.handler(s.desc)}\`: handed to a server, it serves the agent it`,
        `calls on the server's bindings. Called with a handler's call context, it`,
        `passes on the caller's abort signal${s.a2a === undefined ? "" : " and requested extensions"}, not the caller's headers.`,
        ``,
        `@generated from service ${serviceName}`,
      ]),
    );
    f.print(f.export("interface", names.client(s.desc)), " {");
    for (const m of s.methods) {
      const returns = m.kind === "unary" ? [globals.Promise, "<", importShape(f, m.output), ">"] : [globals.AsyncIterable, "<", importShape(f, m.output), ">"];
      f.print(f.jsDoc(m.desc, "  "));
      f.print("  ", m.localName, "(request: ", initShape, "<typeof ", importSchema(f, m.input, true), ">, options?: ", callOptions, "): ", returns, ";");
      f.print();
    }
    f.print("  /** Closes the client's connections (a gRPC channel). */");
    f.print("  close(): void;");
    f.print("}");
    f.print();

    const hasRules = s.routes.length > 0;
    const tables = names.clientTables(s.desc);
    f.print(docLines(f, [`The tables of ${serviceName} the runtime's clients read.`]));
    f.print("const ", tables, " = {");
    f.print("  methods: ", localImport(f, names.methodTable(s.desc), names.methodsFile(file)), ",");
    f.print("  required: ", localImport(f, names.requiredFields(s.desc), names.methodsFile(file)), ",");
    f.print("  rules: ", hasRules ? localImport(f, names.httpRules(s.desc), names.methodsFile(file)) : "[]", ",");
    f.print("};");
    f.print();

    const options = f.import(s.a2a === undefined ? "ClientOptions" : "A2AClientOptions", internal, true);
    const profiled = s.a2a === undefined ? "options" : [f.import("withA2AClientProfile", internal), "(options)"];
    const client = names.client(s.desc);
    f.print(docLines(f, [`A client of ${serviceName} over JSON-RPC 2.0 at \`url\`.`]));
    f.print(f.export("function", names.jsonRpcClient(s.desc)), "(url: string | ", globals.URL, ", options: ", options, " = {}): ", client, " {");
    f.print("  return ", f.import("createJsonRpcClient", internal), "(", tables, ", url, ", profiled, ");");
    f.print("}");
    f.print();
    if (hasRules) {
      f.print(docLines(f, [`A client of ${serviceName} over HTTP+JSON, its rules' paths under \`url\`.`]));
      f.print(f.export("function", names.httpJsonClient(s.desc)), "(url: string | ", globals.URL, ", options: ", options, " = {}): ", client, " {");
      f.print("  return ", f.import("createHttpJsonClient", internal), "(", tables, ", url, ", profiled, ");");
      f.print("}");
      f.print();
    }
    emitFollowTask(f, s, runtimeImport);
    const card = s.a2a?.card;
    if (card === undefined || !hasRules) continue;
    f.print(
      docLines(f, [
        `A client of ${serviceName} from an Agent Card: \`card\` itself, or the URL of the`,
        `card or of the agent (its /.well-known/agent-card.json is fetched, a kept copy`,
        `revalidated by ETag). The first interface of the card whose binding and`,
        `protocol version this client speaks is used, in the card's order or`,
        `\`options.bindings\`, with its URL and tenant.`,
      ]),
    );
    f.print(
      f.export("function", names.cardClient(s.desc)),
      "(card: string | ",
      globals.URL,
      " | ",
      initShape,
      "<typeof ",
      importSchema(f, card, true),
      ">, options: ",
      f.import("A2AConnectOptions", internal, true),
      " = {}): ",
      globals.Promise,
      "<",
      client,
      " & ",
      f.import("CardClient", internal, true),
      "<",
      importShape(f, card),
      ">> {",
    );
    f.print("  return ", f.import("connectA2AClient", internal), "({ ...", tables, ", card: ", importSchema(f, card), " }, card, options);");
    f.print("}");
    f.print();
  }
}

/**
 * `follow<Service>Task`: the runtime's followTask (D30) typed with the file's
 * own messages and given its StreamResponse schema, which the events it
 * makes from snapshots are built from. For A2AService with the messages the
 * task runtime reads (the same ones), and no other service.
 */
function emitFollowTask(f: GeneratedFile, s: ServiceModel, runtimeImport: string): void {
  const tasks = s.a2a?.tasks;
  const send = s.methods.find((m) => m.desc.name === "SendStreamingMessage" && m.output === tasks?.streamResponse);
  if (tasks === undefined || send === undefined) return;
  const internal = names.internalRuntime(runtimeImport);
  const options = f.import("FollowTaskOptions", internal, true);
  const follow = f.import("TaskFollow", internal, true);
  f.print(
    docLines(f, [
      `Follows a task to its end across transport failures (D30): \`start\` is sent as`,
      `SendStreamingMessage, or \`{ taskId }\` names a task under way. A stream that is cut,`,
      `cancelled by the agent's side or ends early is followed by GetTask and, while the`,
      `task is not terminal, SubscribeToTask; every event reaches the caller once, what`,
      `changed while away as events made from the snapshot (\`synthetic\`), each with`,
      `the task as the events so far leave it. Ends at a terminal or interrupted state;`,
      `throws the last error when \`maxRetries\` reconnections in a row bring nothing.`,
    ]),
  );
  f.print(
    f.export("function", names.followTask(s.desc)),
    "(client: ",
    names.client(s.desc),
    ", start: ",
    f.import("MessageInitShape", "@bufbuild/protobuf", true),
    "<typeof ",
    importSchema(f, send.input, true),
    "> | { readonly taskId: string; readonly tenant?: string }, options: ",
    options,
    " = {}): ",
    follow,
    "<",
    importShape(f, send.output),
    ", ",
    importShape(f, tasks.task),
    "> {",
  );
  f.print("  return ", f.import("followTask", internal), "(client, start, { ...options, schema: ", importSchema(f, send.output), " });");
  f.print("}");
  f.print();
}
