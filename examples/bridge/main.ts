/**
 * `node dist/examples/bridge/main.js`: serves the gRPC agent at UPSTREAM
 * (default 127.0.0.1:50051, the reference agent's) over JSON-RPC and
 * HTTP+JSON on PORT (default 8081), with the upstream's own card when its
 * card URL is given as UPSTREAM_CARD (without its signatures and its
 * extended card: see below).
 */
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveBridge } from "./bridge.js";

const upstream = process.env.UPSTREAM ?? "127.0.0.1:50051";
const cardUrl = process.env.UPSTREAM_CARD;
// The upstream's card as this bridge can keep its promises: its signatures cover the upstream's own
// interfaces (serveAgent serves a rebuilt card without them, D101), and its extended card is for
// callers authenticated here, which this bridge does not do: it is not offered.
const upstreamCard = async (url: string) => {
  const response = await fetch(url);
  // An error's body read as a card would be an empty one: a bridge that promises nothing.
  if (!response.ok) throw new Error(`the upstream card at ${url} answered HTTP ${response.status}: ${await response.text()}`);
  const card = fromJson(AgentCardSchema, (await response.json()) as JsonValue, { ignoreUnknownFields: true });
  if (card.capabilities !== undefined) card.capabilities.extendedAgentCard = false;
  return card;
};
const card = cardUrl === undefined
  ? { name: "Bridge", description: `The gRPC agent at ${upstream}`, version: "1.0.0", capabilities: { streaming: true }, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"] }
  : await upstreamCard(cardUrl);

const bridge = await serveBridge(upstream, card, { port: Number(process.env.PORT ?? 8081) });
console.log(`Agent card: ${bridge.server.cardUrl}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void bridge.close().then(() => process.exit(0)));
