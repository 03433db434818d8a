import type { DescField, DescMethod, DescOneof, DescService } from "@bufbuild/protobuf";

/**
 * Problems found while the binding model is built. They are collected rather
 * than thrown one at a time, so a user fixing a proto sees every problem in
 * one run; each names the proto file, the RPC and the offending text.
 */
export interface Diagnostics {
  /** Records a problem with an RPC, optionally with the rule text it concerns. */
  method(method: DescMethod, problem: string, ruleText?: string): void;
  /** Records a problem with a whole service. */
  service(service: DescService, problem: string): void;
  /** Records a problem with a field (or a oneof) of a message. */
  field(field: DescField | DescOneof, problem: string): void;
  /** Throws one error listing every recorded problem, if there is any. */
  throwIfAny(): void;
}

/** Thrown when a proto cannot be turned into a binding model. */
export class ModelError extends Error {
  override readonly name = "ModelError";
  constructor(readonly problems: readonly string[]) {
    super(
      problems.length === 1
        ? (problems[0] as string)
        : `${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
  }
}

export function createDiagnostics(): Diagnostics {
  const problems: string[] = [];
  return {
    method(method, problem, ruleText) {
      const where = `${method.parent.file.proto.name}: rpc ${method.parent.typeName}.${method.name}`;
      problems.push(ruleText === undefined ? `${where}: ${problem}` : `${where}: ${ruleText}: ${problem}`);
    },
    service(service, problem) {
      problems.push(`${service.file.proto.name}: service ${service.typeName}: ${problem}`);
    },
    field(field, problem) {
      const parent = field.parent as { file: { proto: { name: string } }; typeName: string };
      problems.push(`${parent.file.proto.name}: ${field.kind} ${parent.typeName}.${field.name}: ${problem}`);
    },
    throwIfAny() {
      if (problems.length > 0) throw new ModelError(problems);
    },
  };
}
