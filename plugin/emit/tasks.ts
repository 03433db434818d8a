import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { globals, names } from "../names.js";
import { docLines, localImport } from "./shared.js";
import { importSchema, importShape } from "./type-imports.js";

/**
 * The task runtime typed with this file's messages, for A2AService (by its
 * full name, D21): the executor an agent writes, the events it yields, and
 * the factory making it, with a store, into the whole handler. The compiler
 * checks here that the runtime's handler fits the generated interface.
 */
export function emitTasks(f: GeneratedFile, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  for (const s of services) {
    const t = s.a2a?.tasks;
    if (t === undefined) continue;
    const initShape = f.import("MessageInitShape", "@bufbuild/protobuf", true);
    const service = s.desc.typeName;
    const types = names.taskTypes(s.desc);
    const context = names.requestContext(s.desc);
    const event = names.taskEvent(s.desc);
    const executor = names.executor(s.desc);
    const handlerType = names.taskHandler(s.desc);

    f.print(docLines(f, [`The messages of ${service} the task runtime works with.`]));
    f.print(f.export("interface", types), " {");
    f.print("  readonly message: ", importShape(f, t.message), ";");
    f.print("  readonly task: ", importShape(f, t.task), ";");
    f.print("  readonly streamResponse: ", importShape(f, t.streamResponse), ";");
    f.print("  readonly pushConfig: ", importShape(f, t.pushConfig), ";");
    f.print("}");
    f.print();

    f.print(docLines(f, [`What the executor learns about a message sent to ${service}: the message, the task so far, its ids, the caller, and a signal for cancel and shutdown.`]));
    f.print(f.export("type", context), " = ", f.import("RequestContext", internal, true), "<", importShape(f, t.message), ", ", importShape(f, t.task), ">;");
    f.print();

    f.print(
      docLines(f, [
        "One thing that happened, as the executor yields it:",
        "`{ state, message? }` moves the task to a state (the message as text or a Message),",
        "`{ artifact, append?, lastChunk? }` sends an artifact or a chunk of one,",
        "`{ reply }` answers a message directly, with no task.",
      ]),
    );
    f.print(
      f.export("type", event),
      " = ",
      f.import("TaskEvent", internal, true),
      "<",
      initShape,
      "<typeof ",
      importSchema(f, t.message, true),
      ">, ",
      initShape,
      "<typeof ",
      importSchema(f, t.artifact, true),
      ">, ",
      importShape(f, t.taskState),
      ">;",
    );
    f.print();

    f.print(
      docLines(f, [
        `The agent: called for each message sent to ${service}, it yields what happens.`,
        "Returning ends the task COMPLETED (unless it is already terminal or waiting for",
        "input); throwing ends it FAILED and reports the error to `onError`.",
      ]),
    );
    f.print(f.export("type", executor), " = (context: ", context, ") => ", globals.AsyncIterable, "<", event, "> | ", globals.Iterable, "<", event, ">;");
    f.print();

    f.print(docLines(f, [`Every method of ${names.handler(s.desc)} but GetExtendedAgentCard, from one executor, and close().`]));
    f.print(f.export("type", handlerType), " = ", f.import("TaskHandler", internal, true), "<", types, ">;");
    f.print();

    f.print(
      docLines(f, [
        `Turns an executor into the handler of ${service}: tasks, their history and`,
        "artifacts, streams and subscribers, listing, cancel, and push notifications with",
        "their delivery, kept in `options.store` (by default in memory). Serve it with",
        `\`${names.serve(s.desc)}\`; add \`getExtendedAgentCard\` beside it if the agent has one.`,
      ]),
    );
    f.print(
      f.export("function", names.taskHandlerFactory(s.desc)),
      "(executor: ",
      executor,
      ", options: ",
      f.import("TaskHandlerOptions", internal, true),
      " = {}): ",
      handlerType,
      " {",
    );
    f.print("  return ", f.import("createTaskHandler", internal), "<", types, ">(");
    f.print("    {");
    f.print("      schemas: {");
    f.print("        task: ", importSchema(f, t.task), ",");
    f.print("        taskStatus: ", importSchema(f, t.taskStatus), ",");
    f.print("        message: ", importSchema(f, t.message), ",");
    f.print("        artifact: ", importSchema(f, t.artifact), ",");
    f.print("        statusUpdate: ", importSchema(f, t.statusUpdate), ",");
    f.print("        artifactUpdate: ", importSchema(f, t.artifactUpdate), ",");
    f.print("        streamResponse: ", importSchema(f, t.streamResponse), ",");
    f.print("        taskState: ", importSchema(f, t.taskState), ",");
    f.print("        role: ", importSchema(f, t.role), ",");
    f.print("      },");
    f.print("      required: ", localImport(f, names.requiredFields(s.desc), names.methodsFile(file)), ",");
    f.print("    },");
    f.print("    executor,");
    f.print("    options,");
    // The compiler holds the runtime's handler to the generated interface here.
    f.print("  ) satisfies ", localImport(f, names.handler(s.desc), names.handlerFile(file), true), ";");
    f.print("}");
    f.print();
  }
}
