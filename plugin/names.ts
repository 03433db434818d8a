/**
 * Every name the plugin gives to a generated file or declaration, decided in
 * one place so emitters and tests never spell one themselves.
 */
import type { DescFile, DescService } from "@bufbuild/protobuf";
import type { ErrorModel } from "./model/error-table.js";

export const names = {
  /** `a2a_handler.ts` beside protoc-gen-es's `a2a_pb.ts`. */
  handlerFile: (file: DescFile) => `${file.name}_handler.ts`,
  methodsFile: (file: DescFile) => `${file.name}_methods.ts`,
  errorsFile: (file: DescFile) => `${file.name}_errors.ts`,
  /** `A2AServiceHandler`: the interface an agent implements. */
  handler: (service: DescService) => `${service.name}Handler`,
  /** `A2AServiceMethods`: one entry per RPC, keyed by the handler's method name. */
  methodTable: (service: DescService) => `${service.name}Methods`,
  /** `A2AServiceHttpRules`: every google.api.http rule in route precedence order. */
  httpRules: (service: DescService) => `${service.name}HttpRules`,
  /** `A2AServiceRequiredFields`: REQUIRED fields of the service's messages. */
  requiredFields: (service: DescService) => `${service.name}RequiredFields`,
  errorTable: () => "A2AErrorTable",
  /** `TaskNotFoundError`. */
  errorClass: (error: ErrorModel) => `${error.name}Error`,
} as const;
