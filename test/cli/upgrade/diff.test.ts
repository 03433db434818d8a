/**
 * The upgrade diff and report: the real pinned versions of a2a.proto (pulled
 * into vendor/ by `npm run pull-proto`), and a synthetic fixture pair
 * (fixtures/protos/old and new) with one change of each kind, each checked
 * against the classification it must get.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema, type FileDescriptorSet } from "@bufbuild/protobuf/wkt";
import {
  buildDescriptors,
  checkSameLine,
  diffDescriptors,
  editHandlers,
  onlyLinesInserted,
  renderJson,
  renderText,
  reportJson,
  runUpgrade,
  UpgradeRefusedError,
} from "../../../cli/upgrade/index.js";
import { projectRoot, scratchDir } from "../../support/protos.js";

const googleapis = join(projectRoot, "vendor/googleapis");
const pinned = new Map<string, FileDescriptorSet>();
/** The descriptors of a pinned a2a.proto with the googleapis protos it imports (built once per version). */
function a2a(version: string): FileDescriptorSet {
  let set = pinned.get(version);
  if (set === undefined) {
    set = buildDescriptors([join(projectRoot, "vendor/a2a", version), googleapis]);
    pinned.set(version, set);
  }
  return set;
}
const fixture = (side: "old" | "new") => buildDescriptors([join(projectRoot, "test/cli/upgrade/fixtures/protos", side), googleapis]);

describe("the pinned versions of a2a.proto", () => {
  test("v1.0.0 -> v1.0.1 changed only comments: the tenant fields' (and AgentInterface.tenant's) documentation", () => {
    const diff = diffDescriptors(a2a("v1.0.0"), a2a("v1.0.1"));
    expect(diff.commentOnly).toBe(true);
    expect(diff.identical).toBe(false);
    expect(diff.changes.map((c) => `${c.kind} ${c.element} ${c.breaking}`)).toEqual(
      [
        "AgentInterface",
        "CancelTaskRequest",
        "DeleteTaskPushNotificationConfigRequest",
        "GetExtendedAgentCardRequest",
        "GetTaskPushNotificationConfigRequest",
        "GetTaskRequest",
        "ListTaskPushNotificationConfigsRequest",
        "ListTasksRequest",
        "SendMessageRequest",
        "SubscribeToTaskRequest",
        "TaskPushNotificationConfig",
      ].map((m) => `field.changed.comments lf.a2a.v1.${m}.tenant none`),
    );
    const get = diff.changes.find((c) => c.element === "lf.a2a.v1.GetTaskRequest.tenant");
    expect(get?.before).toBe("Optional. Tenant ID, provided as a path parameter.");
    expect(get?.after).toBe("Optional. Opaque routing identifier. Must match the `tenant` value from\nthe selected `AgentInterface` in the Agent Card when that field is set.");
    expect(diff.services).toEqual([]);

    const text = renderText(diff, { from: "v1.0.0", to: "v1.0.1" });
    expect(text.split("\n").slice(0, 3)).toEqual([
      "a2a.proto v1.0.0 -> v1.0.1 (A2A 1.x, package lf.a2a.v1)",
      "",
      "Only comments changed: 11 comments (on 11 fields). No service, RPC, message, field, enum, enum value, oneof, field_behavior or google.api.http rule changed, so nothing changes on the wire or in the generated API: regenerating changes only the generated doc comments, and your code needs no change.",
    ]);
    expect(text).toContain("\nComments changed (11)\n  - field lf.a2a.v1.AgentInterface.tenant\n");
    expect(text).not.toContain("Breaking");
  });

  test("v1.0.1 -> main changed only one comment: AgentInterface.url (gRPC addresses are host:port)", () => {
    const diff = diffDescriptors(a2a("v1.0.1"), a2a("main"));
    expect(diff.commentOnly).toBe(true);
    expect(diff.changes.map((c) => `${c.kind} ${c.element}`)).toEqual(["field.changed.comments lf.a2a.v1.AgentInterface.url"]);
    expect(diff.changes[0]?.after).toContain('For gRPC, the address should be in the format "hostname:port".');
    const json = reportJson(diff, { from: "v1.0.1", to: "main" });
    expect(json).toMatchObject({ from: "v1.0.1", to: "main", identical: false, commentOnly: true, line: { line: "1.x", package: "lf.a2a.v1" } });
    expect(json.summary).toEqual({ total: 1, breakingBoth: 0, breakingServers: 0, breakingClients: 0, notBreaking: 0, comments: 1 });
    expect(renderText(diff, { from: "v1.0.1", to: "main" })).toContain("Only comments changed: 1 comment (on 1 field).");
  });

  test("v1.0.0 -> main, across both steps, is comments only too; a version against itself is no change", () => {
    expect(diffDescriptors(a2a("v1.0.0"), a2a("main")).commentOnly).toBe(true);
    const same = diffDescriptors(a2a("v1.0.1"), a2a("v1.0.1"));
    expect(same.identical).toBe(true);
    expect(renderText(same, { from: "v1.0.1", to: "v1.0.1" })).toContain("\nNo change: both protos declare the same services");
  });

  test("v0.3.0 (package a2a.v1) is refused either way, saying what to do instead", () => {
    const down = () => checkSameLine(a2a("v1.0.1"), a2a("v0.3.0"), "v1.0.1", "v0.3.0");
    expect(down).toThrow(UpgradeRefusedError);
    expect(down).toThrow(/^a2a\.proto v0\.3\.0 is A2A 0\.3 \(package a2a\.v1\), another major line than your A2A 1\.x \(package lf\.a2a\.v1\)\..*Stay on 1\.x: upgrade to a 1\.x version instead \(v1\.0\.1, or main\)\. To answer 0\.3 clients as well, keep the 1\.x proto and serve with `compat: \{ v0_3: true \}` \(D110\)\. Nothing was changed\.$/);
    const up = () => checkSameLine(a2a("v0.3.0"), a2a("v1.0.1"), "v0.3.0", "v1.0.1");
    expect(up).toThrow(/^a2a\.proto v0\.3\.0 is A2A 0\.3 \(package a2a\.v1\), which protoc-gen-a2a never generated for; .*nothing to upgrade in place: pull the 1\.x proto, regenerate, and implement A2AServiceHandler/);
  });

  test("runUpgrade refuses v0.3.0 before it reads or writes the user's code", async () => {
    const { dir, done } = scratchDir("upgrade-refuse");
    try {
      // A file runUpgrade would otherwise parse: it is not even TypeScript.
      writeFileSync(join(dir, "agent.ts"), "this is not TypeScript {\n");
      await expect(
        runUpgrade({ repoDir: dir, oldDescriptors: a2a("v1.0.1"), newDescriptors: toBinary(FileDescriptorSetSchema, a2a("v0.3.0")), from: "v1.0.1", to: "v0.3.0" }),
      ).rejects.toThrow(UpgradeRefusedError);
      expect(readFileSync(join(dir, "agent.ts"), "utf8")).toBe("this is not TypeScript {\n");
    } finally {
      done();
    }
  }, 30_000);
});

describe("the synthetic fixture: one change of each kind", () => {
  const diff = diffDescriptors(fixture("old"), fixture("new"));

  test("each change is found and classified", () => {
    expect(diff.changes.map((c) => [c.kind, c.element, c.breaking])).toEqual([
      ["service.added", "shop.v1.AuditService", "none"],
      ["enum-value.removed", "shop.v1.Color.COLOR_GREEN", "both"],
      ["enum-value.renamed", "shop.v1.Color.COLOR_NAVY", "both"],
      ["enum-value.changed.number", "shop.v1.Color.COLOR_RED", "both"],
      ["enum-value.added", "shop.v1.Color.COLOR_YELLOW", "none"],
      ["message.added", "shop.v1.CountResponse", "none"],
      ["message.removed", "shop.v1.DeleteItemRequest", "both"],
      ["message.renamed", "shop.v1.Form", "both"],
      ["field.added", "shop.v1.GetItemRequest.reason", "both"],
      ["oneof.renamed", "shop.v1.Item.category", "both"],
      ["field.changed.comments", "shop.v1.Item.comment", "none"],
      ["field.added", "shop.v1.Item.description", "none"],
      ["oneof.added", "shop.v1.Item.detail", "none"],
      ["field.removed", "shop.v1.Item.legacy", "both"],
      ["field.changed.oneof", "shop.v1.Item.note", "both"],
      ["field.changed.deprecated", "shop.v1.Item.on_sale", "none"],
      ["field.changed.type", "shop.v1.Item.price", "both"],
      ["field.changed.json-name", "shop.v1.Item.sku", "both"],
      ["field.changed.field-behavior", "shop.v1.Item.status", "none"],
      ["field.changed.presence", "shop.v1.Item.stock", "both"],
      ["field.changed.label", "shop.v1.Item.tags", "both"],
      ["field.renamed", "shop.v1.Item.title", "both"],
      ["field.changed.number", "shop.v1.Item.weight", "both"],
      ["enum.removed", "shop.v1.Legacy", "both"],
      ["service.removed", "shop.v1.LegacyService", "both"],
      ["field.changed.field-behavior", "shop.v1.ListItemsRequest.filter", "both"],
      ["field.changed.field-behavior", "shop.v1.ListItemsResponse.next_page_token", "clients"],
      ["field.changed.field-behavior", "shop.v1.ListItemsResponse.total_size", "servers"],
      ["service.renamed", "shop.v1.Reporting", "both"],
      ["enum.renamed", "shop.v1.SalesChannel", "both"],
      ["rpc.changed.output", "shop.v1.ShopService.CountItems", "both"],
      ["http-rule.changed.http-route", "shop.v1.ShopService.CountItems GET /items/count", "both"],
      ["rpc.removed", "shop.v1.ShopService.DeleteItem", "both"],
      ["http-rule.added", "shop.v1.ShopService.GetItem GET /v2/items/{id}", "none"],
      ["http-rule.changed.http-route", "shop.v1.ShopService.GetPrice GET /prices/{tenant}", "both"],
      ["http-rule.removed", "shop.v1.ShopService.ListItems GET /items", "both"],
      ["rpc.renamed", "shop.v1.ShopService.PlaceOrder", "both"],
      ["http-rule.renamed", "shop.v1.ShopService.RenameItem POST /items/{item.title}:rename", "none"],
      ["rpc.added", "shop.v1.ShopService.RestockItem", "none"],
      ["http-rule.changed.http-body", "shop.v1.ShopService.UpdateItem PATCH /items/{item.id}", "both"],
      ["rpc.changed.streaming", "shop.v1.ShopService.WatchItem", "both"],
      ["enum.added", "shop.v1.Size", "none"],
    ]);
  });

  test("renames name the old element; a field's type that only follows a message rename is not a type change; a renamed oneof's members have not moved", () => {
    const by = (kind: string, element: string) => diff.changes.find((c) => c.kind === kind && c.element === element);
    expect(by("rpc.renamed", "shop.v1.ShopService.PlaceOrder")).toMatchObject({ oldElement: "shop.v1.ShopService.OrderItem", before: "OrderItem", after: "PlaceOrder" });
    expect(by("field.renamed", "shop.v1.Item.title")).toMatchObject({ oldElement: "shop.v1.Item.name", before: "name (JSON name)", after: "title (JSON title)" });
    expect(by("message.renamed", "shop.v1.Form")).toMatchObject({ oldElement: "shop.v1.Shape" });
    expect(by("enum.renamed", "shop.v1.SalesChannel")).toMatchObject({ oldElement: "shop.v1.Channel" });
    expect(by("service.renamed", "shop.v1.Reporting")).toMatchObject({ oldElement: "shop.v1.Reports" });
    expect(by("field.added", "shop.v1.GetItemRequest.reason")?.reason).toMatch(/^A new field marked REQUIRED, in a request: an upgraded agent refuses a request without it/);
    expect(by("enum-value.renamed", "shop.v1.Color.COLOR_NAVY")).toMatchObject({ oldElement: "shop.v1.Color.COLOR_BLUE" });
    expect(diff.changes.filter((c) => c.element === "shop.v1.Item.shape")).toEqual([]);
    expect(diff.changes.filter((c) => c.element === "shop.v1.Item.book" || c.element === "shop.v1.Item.toy")).toEqual([]);
    expect(by("field.changed.number", "shop.v1.Item.weight")).toMatchObject({ before: "16", after: "17" });
    expect(by("field.changed.presence", "shop.v1.Item.stock")).toMatchObject({ before: "implicit", after: "explicit (optional)" });
    expect(by("field.changed.json-name", "shop.v1.Item.sku")).toMatchObject({ before: "skuCode", after: "SKU" });
    expect(by("field.changed.field-behavior", "shop.v1.ListItemsRequest.filter")).toMatchObject({ before: "(none)", after: "REQUIRED" });
    expect(by("field.changed.field-behavior", "shop.v1.ListItemsRequest.filter")?.reason).toContain("refuses a request without it with InvalidParams (D11)");
    expect(by("http-rule.changed.http-route", "shop.v1.ShopService.CountItems GET /items/count")).toMatchObject({ before: "GET /items:count", after: "GET /items/count" });
    // An HTTP path variable renamed with its field keeps the URL; one that binds another field does not; `{id}` is `{id=*}`.
    expect(by("http-rule.renamed", "shop.v1.ShopService.RenameItem POST /items/{item.title}:rename")).toMatchObject({ before: "POST /items/{item.name}:rename", after: "POST /items/{item.title}:rename" });
    expect(by("http-rule.changed.http-route", "shop.v1.ShopService.GetPrice GET /prices/{tenant}")?.reason).toContain("now bind other fields (id -> tenant)");
    expect(diff.changes.filter((c) => c.element.startsWith("shop.v1.ShopService.GetItem GET /items/"))).toEqual([]);
    expect(by("http-rule.changed.http-body", "shop.v1.ShopService.UpdateItem PATCH /items/{item.id}")).toMatchObject({ before: '"item"', after: '"*"' });
    expect(by("field.changed.comments", "shop.v1.Item.comment")).toMatchObject({ before: "What the seller says.", after: "What the seller says about the item." });
  });

  test("the service deltas the handler edits work from", () => {
    const shop = diff.services.find((s) => s.service === "shop.v1.ShopService");
    expect(shop).toMatchObject({ name: "ShopService", protoFile: "shop/v1/shop.proto", a2a: false });
    expect(shop?.added.map((r) => r.method)).toEqual(["restockItem"]);
    expect(shop?.removed.map((r) => r.method)).toEqual(["deleteItem"]);
    expect(shop?.renamed.map((r) => `${r.from.method}->${r.to.method}`)).toEqual(["orderItem->placeOrder"]);
    expect(shop?.changed.map((r) => `${r.rpc.method}:${r.aspects.join(",")}`)).toEqual(["countItems:output", "watchItem:streaming"]);
    expect(diff.services.map((s) => s.service)).toEqual(["shop.v1.AuditService", "shop.v1.LegacyService", "shop.v1.ShopService"]);
  });

  test("the text report groups the changes by whom they break, in a stable order", () => {
    const text = renderText(diff, { from: "old", to: "new" });
    expect(text.split("\n").slice(0, 3)).toEqual([
      "a2a.proto old -> new",
      "",
      "41 changes: 30 breaking (28 for servers and clients, 1 for servers only, 1 for clients only), 11 not breaking; and 1 comment changed.",
    ]);
    const headings = text.split("\n").filter((l) => /^[A-Z]/.test(l));
    expect(headings).toEqual([
      "Breaking for servers and clients (28)",
      "Breaking for servers (agents) (1)",
      "Breaking for clients (callers) (1)",
      "Not breaking (11)",
      "Comments changed (1)",
    ]);
    expect(text).toContain(
      [
        "  - field shop.v1.ListItemsResponse.total_size: field_behavior changed",
        "      was: (none)",
        "      now: REQUIRED",
        "      Now REQUIRED, in a response: the agent must now set it; the JSON bindings write it even at its default (D11). Callers are not affected.",
      ].join("\n"),
    );
    expect(text).toContain("  - RPC renamed: shop.v1.ShopService.OrderItem -> shop.v1.ShopService.PlaceOrder\n");
  });

  test("the report is deterministic: the same bytes for the same protos, whatever order the files come in", () => {
    const reversed = (set: FileDescriptorSet) => create(FileDescriptorSetSchema, { file: [...set.file].reverse() });
    const again = diffDescriptors(reversed(fixture("old")), reversed(fixture("new")));
    expect(renderText(again)).toBe(renderText(diff));
    expect(renderJson(again)).toBe(renderJson(diff));
    const json = JSON.parse(renderJson(diff, { from: "old", to: "new" })) as ReturnType<typeof reportJson>;
    expect(json.changes).toHaveLength(42);
    expect(json.summary).toEqual({ total: 42, breakingBoth: 28, breakingServers: 1, breakingClients: 1, notBreaking: 11, comments: 1 });
    expect(json.handlers).toBeNull();
  });

  test("the handler of a service that is not A2A's: stub typed with CallContext, marks for the removed, renamed and changed RPCs", async () => {
    const { dir, done } = scratchDir("upgrade-shop");
    try {
      mkdirSync(join(dir, "src"));
      const before = [
        'import type { ShopServiceHandler } from "../gen/shop/v1/shop_handler.js";',
        'import { ItemSchema } from "../gen/shop/v1/shop_pb.js";',
        "",
        "export const shop = {",
        "  async deleteItem() { return { id: \"x\" }; },",
        "  orderItem: async () => ({}),",
        "  async *watchItem() { yield { id: \"x\" }; },",
        "  async countItems() { return {}; },",
        "} satisfies ShopServiceHandler;",
        "void ItemSchema;",
        "// A name of the user's own that a stub's import must not take.",
        'const GetItemRequest = "mine";',
        "void GetItemRequest;",
        "",
      ].join("\r\n");
      writeFileSync(join(dir, "src/shop.ts"), before);
      const result = await editHandlers({ repoDir: dir, diff, from: "old", to: "new" });
      expect(result.scanned).toEqual(["src/shop.ts"]);
      expect(result.edits.map((e) => `${e.line} ${e.action} ${e.method}`)).toEqual([
        "9 stub-added restockItem",
        "14 marked-removed deleteItem",
        "17 marked-renamed orderItem",
        "19 marked-changed watchItem",
        "21 marked-changed countItems",
      ]);
      const after = result.files[0]?.after ?? "";
      expect(onlyLinesInserted(before, after)).toBe(true);
      // The file's CRLF line ends are kept in what is added.
      expect(after.replace(/\r\n/g, "")).not.toContain("\n");
      expect(after).toContain('import type { CallContext } from "protoc-gen-a2a/runtime";\r\n');
      // ItemSchema is imported already (as a value, which serves in `typeof`); GetItemRequest is a name of the file's own.
      expect(after).toContain('import type { GetItemRequest as GetItemRequestFromProto } from "../gen/shop/v1/shop_pb.js";\r\n');
      expect(after).toContain("  async restockItem(_request: GetItemRequestFromProto, _context: CallContext): Promise<MessageInitShape<typeof ItemSchema>> {\r\n");
      expect(after).toContain("RPC OrderItem was renamed to PlaceOrder: rename this method to placeOrder");
      expect(after).toContain("RPC WatchItem changed: it is now unary (return a Promise). Check this method's signature.");
      expect(after).toContain("RPC CountItems changed: its response is now CountResponse (was ListItemsResponse). Check this method's signature.");
      // deleteItem only: satisfies checks excess properties, but TypeScript reports only a literal's first
      // (a directive on orderItem too would be unused, itself an error).
      expect(after.match(/@ts-expect-error/g)).toHaveLength(1);
      // The stub goes first in the literal; each mark stays right above its member, after the stub.
      expect(after).toMatch(/ {2}\},\r\n\r\n {2}\/\/ protoc-gen-a2a upgrade \(old -> new\): RPC shop\.v1\.ShopService\.DeleteItem was removed[^\r\n]*\r\n {2}\/\/ @ts-expect-error[^\r\n]*\r\n {2}async deleteItem\(\)/);
    } finally {
      done();
    }
  }, 30_000);
});

test("an added RPC named like a client's member is reported, and stubbed, under the handler's name for it (D118)", () => {
  const { dir, done } = scratchDir("upgrade-members");
  try {
    const proto = (rpcs: string) => `syntax = "proto3";\npackage m.v1;\nmessage Req {}\nmessage Res {}\nservice Members {\n  rpc Get(Req) returns (Res);\n${rpcs}}\n`;
    for (const [side, rpcs] of [["old", ""], ["new", "  rpc Close(Req) returns (Res);\n  rpc Then(Req) returns (Res);\n"]] as const) {
      mkdirSync(join(dir, side), { recursive: true });
      writeFileSync(join(dir, side, "m.proto"), proto(rpcs));
    }
    const diff = diffDescriptors(buildDescriptors(join(dir, "old")), buildDescriptors(join(dir, "new")));
    expect(diff.services.flatMap((s) => s.added.map((r) => `${r.name} ${r.method}`))).toEqual(["Close close$", "Then then$"]);
  } finally {
    done();
  }
}, 30_000);
