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
