import { generate } from "../support/protos.js";
const proto = (rule: string) => `syntax = "proto3";
package demo.v1;
import "google/api/annotations.proto";
message Req { string id = 1; }
message Res { string id = 1; }
service Svc {
  rpc Get(Req) returns (Res) { option (google.api.http) = { ${rule} }; }
}
`;
test.each(["", `get: ""`, `get: "/x/{id}" additional_bindings {}`])("explore %s", (r) => {
  try { const out = generate({ "demo/v1/svc.proto": proto(r) }); console.log("OK", out.get("demo/v1/svc_methods.ts")?.match(/HttpRules[\s\S]*?\];/)?.[0]); }
  catch (e) { console.log("ERR", (e as Error).message); }
});
