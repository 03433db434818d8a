/**
 * The card's interfaces as serveA2AService builds them from what it mounts (D17, D111).
 */
import { withInterfaces } from "../../runtime/a2a/agent-card.js";

test("a declared tenant goes on its binding's 1.0 interface, not on the 0.3 one beside it: a 0.3 call names no tenant (D110)", () => {
  const card = { name: "a", supportedInterfaces: [{ url: "x", protocolBinding: "JSONRPC", tenant: "acme" }] };
  const mounted = [
    { binding: "JSONRPC" as const, url: "http://h/a2a/jsonrpc" },
    { binding: "HTTP+JSON" as const, url: "http://h/a2a/rest" },
    { binding: "JSONRPC" as const, url: "http://h/a2a/jsonrpc", protocolVersion: "0.3" },
  ];
  expect(withInterfaces(card, mounted, "1.0").supportedInterfaces).toEqual([
    { url: "http://h/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "acme" },
    { url: "http://h/a2a/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    { url: "http://h/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
  ]);
});

test("a custom binding the card declares (spec 5.8) is kept after the mounted ones; a core binding's stale entry is not", async () => {
  const websocket = { url: "wss://h/a2a/ws", protocolBinding: "https://example.com/bindings/websocket/v1", protocolVersion: "1.0" };
  const card = { name: "a", supportedInterfaces: [{ url: "http://old/rpc", protocolBinding: "JSONRPC" }, websocket] };
  expect(withInterfaces(card, [{ binding: "GRPC" as const, url: "h:50051" }], "1.0").supportedInterfaces).toEqual([{ url: "h:50051", protocolBinding: "GRPC", protocolVersion: "1.0" }, websocket]);
  // As served.
  const { serveA2AService } = await import("../../generated/a2a_server.js");
  const { createA2AServiceTaskHandler } = await import("../../generated/a2a_tasks.js");
  const { referenceCard } = await import("../../examples/reference-agent/config.js");
  const handler = createA2AServiceTaskHandler(async function* () {});
  const { AgentInterfaceSchema } = await import("../../generated/a2a_pb.js");
  const { create } = await import("@bufbuild/protobuf");
  const server = await serveA2AService(handler, { ...referenceCard, supportedInterfaces: [create(AgentInterfaceSchema, websocket)] }, { port: 0, grpcPort: false, drainMs: 100 });
  try {
    const served = (await (await fetch(server.cardUrl)).json()) as { supportedInterfaces: { protocolBinding: string; url: string }[] };
    expect(served.supportedInterfaces.map((i) => i.protocolBinding)).toEqual(["JSONRPC", "HTTP+JSON", "https://example.com/bindings/websocket/v1"]);
    expect(served.supportedInterfaces.at(-1)?.url).toBe("wss://h/a2a/ws");
  } finally {
    await server.close();
  }
});
