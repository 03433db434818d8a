import type { GeneratedFile } from "@bufbuild/protoplugin";
import { errorTable } from "../model/error-table.js";
import { names } from "../names.js";
import type { Renderer } from "./render.js";

/**
 * The error table as data and one class per error. Classes extend the
 * runtime's branded A2AError, so recognising an error never depends on
 * which copy of the generated code or runtime raised it.
 */
export function emitErrors(f: GeneratedFile, r: Renderer, runtimeImport: string): void {
  const str = (s: string) => r.ref(f.string(s));
  const a2aError = r.ref(f.import("A2AError", runtimeImport));
  const options = r.ref(f.import("A2AErrorOptions", runtimeImport, true));
  r.print("errors", {
    table: r.ref(f.export("const", names.errorTable())),
    tableName: names.errorTable(),
    entryType: r.ref(f.import("ErrorTableEntry", runtimeImport, true)),
    errors: errorTable.map((e) => ({
      key: e.name,
      name: str(e.name),
      reason: str(e.reason),
      domain: str(e.domain),
      jsonRpcCode: e.jsonRpcCode,
      grpcStatus: str(e.grpcStatus),
      httpStatus: e.httpStatus,
      defaultMessage: str(e.defaultMessage),
      jsDoc: r.ref(f.jsDoc(`${e.doc}\n\nJSON-RPC ${e.jsonRpcCode}, gRPC ${e.grpcStatus}, HTTP ${e.httpStatus}.`, "")),
      declaration: r.ref(f.export("class", names.errorClass(e))),
      a2aError,
      options,
    })),
  });
}
