/**
 * plugin/emit/type-imports.ts names every type once per file, by protoplugin's rules, instead of
 * asking protoplugin (which names the whole file again on each call). Here every type of every
 * file a run sees (the fixtures, the codec fixtures' proto2 and editions files, a2a.proto, the
 * well-known types and googleapis, and a file made of name clashes) gets the same symbol from
 * both, as schema and as shape, type-only or not.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { DescEnum, DescMessage } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { ImportSymbol } from "@bufbuild/protoplugin";
import { createEcmaScriptPlugin } from "../../plugin/ecmascript-plugin.js";
import { importSchema, importShape } from "../../plugin/emit/type-imports.js";
import { codecFixtures } from "../support/codec-fixtures.js";
import { createRequest, projectRoot } from "../support/protos.js";

// Every way protoplugin resolves a clash: a nested type and a top-level one with the same
// identifier, a message named as another's schema, reserved words, a service and an extension
// taking names a shape or schema already took, a file name that is not an identifier.
const clashes = `syntax = "proto2";
package clash.v1;
import "google/protobuf/descriptor.proto";
message Foo {
  message Bar {}
  enum Baz { BAZ_UNSPECIFIED = 0; }
  optional Bar bar = 1;
}
message Foo_Bar {}
message FooSchema {}
message Foo_BarSchema {}
enum Foo_Baz { FOO_BAZ_UNSPECIFIED = 0; }
message Object {}
message Uint8Array {}
message Partial {}
message Foo_Bar_ {}
service Foo_Baz_ {}
service FooSchemaService {}
extend google.protobuf.MessageOptions { optional string Foo_BazSchema = 50001; optional Foo Foo_Baz_Schema = 50002; }
`;

const fixtureDir = join(projectRoot, "proto/fixtures");
const files: Record<string, string> = {
  ...Object.fromEntries(
    readdirSync(fixtureDir, { recursive: true, encoding: "utf8" })
      .filter((p) => p.endsWith(".proto"))
      .map((p) => [`fixtures/${p.split("\\").join("/")}`, readFileSync(join(fixtureDir, p), "utf8")]),
  ),
  ...codecFixtures,
  "a2a.proto": readFileSync(join(projectRoot, "vendor/a2a/current/a2a.proto"), "utf8"),
  "clash/v1/name-clash.proto": clashes,
};

const same = (s: ImportSymbol) => ({ name: s.name, from: s.from, typeOnly: s.typeOnly, id: s.id });

test.each(["target=ts", "target=ts,import_extension=js,map_imports=google/api/*.proto:@example/googleapis"])(
  "every type's symbols are protoplugin's (%s)",
  (parameter) => {
    const compared: string[] = [];
    const differences: unknown[] = [];
    const plugin = createEcmaScriptPlugin({
      name: "names",
      version: "v0",
      parseOptions: () => ({}),
      generateTs(schema) {
        // Two files, so the names are found in a file other than the one that first asked.
        const first = schema.generateFile("first.ts");
        const second = schema.generateFile("second.ts");
        for (const file of schema.allFiles) {
          for (const desc of [file, ...nestedTypes(file)]) {
            for (const f of [first, second]) {
              for (const typeOnly of [false, true]) {
                const ours = same(importSchema(f, desc, typeOnly));
                const theirs = same(f.importSchema(desc, typeOnly));
                if (JSON.stringify(ours) !== JSON.stringify(theirs)) differences.push({ ours, theirs });
                compared.push(ours.name);
              }
              if (desc.kind === "message" || desc.kind === "enum") {
                const ours = same(importShape(f, desc as DescMessage | DescEnum));
                const theirs = same(f.importShape(desc as DescMessage | DescEnum));
                if (JSON.stringify(ours) !== JSON.stringify(theirs)) differences.push({ ours, theirs });
                compared.push(ours.name);
              }
            }
          }
        }
      },
    });
    plugin.run(createRequest(files, parameter));
    expect(differences).toEqual([]);
    // The clashes were there to be resolved, and with them the rest of a2a.proto and the fixtures.
    expect(compared).toEqual(expect.arrayContaining(["Foo_Bar$", "Foo_BarSchema$1", "Foo_BazSchema$1", "Object$", "Uint8Array$", "Partial$", "file_clash_v1_name_clash", "TaskSchema", "TimestampSchema"]));
    expect(new Set(compared).size).toBeGreaterThan(400);
  },
  60_000,
);
