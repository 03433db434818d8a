/**
 * The extended card as the public one is served (D17, D101): GetExtendedAgentCard
 * answers on every binding with the card the handler returned, its
 * `supportedInterfaces` the interfaces this server mounts, in its presence
 * form and, when the server signs, with its signatures. The handler is asked
 * each time, so a card that changes is served as it is now; one that does not
 * keeps its signatures (the signer remembers recent cards).
 */
import { create, fromJson, toJson, type DescMessage, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import type { MethodSpec } from "../core/method-spec.js";
import { withServedInterfaces, type MountedInterface } from "./agent-card.js";
import type { CardSigner } from "./card-signing.js";

type Method = (request: unknown, context: unknown) => unknown;

export interface ExtendedCardServing {
  /** The interfaces mounted, known once the server listens; undefined before (no call comes then). */
  readonly interfaces: () => readonly MountedInterface[] | undefined;
  readonly signer?: CardSigner | undefined;
}

/**
 * A handler with the same methods as `handler`, each bound to it, and
 * GetExtendedAgentCard's answer given the mounted interfaces and signed. A
 * new object rather than a subclass or a Proxy: the handler may be a class
 * with private fields, which only its own methods, called on itself, can
 * read. A handler without GetExtendedAgentCard is returned as it is.
 */
export function servedExtendedCardHandler<H extends object>(handler: H, methods: Readonly<Record<string, MethodSpec>>, schema: DescMessage, serving: ExtendedCardServing): H {
  const own = handler as Record<string, unknown>;
  const getCard = own["getExtendedAgentCard"];
  if (typeof getCard !== "function") return handler;
  const wrapped: Record<string, Method> = {};
  for (const spec of Object.values(methods)) {
    const method = own[spec.localName];
    if (typeof method === "function") wrapped[spec.localName] = (method as Method).bind(handler);
  }
  const asked = (getCard as Method).bind(handler);
  wrapped["getExtendedAgentCard"] = async (request, context) => {
    const card = toJson(schema, create(schema, (await asked(request, context)) as MessageInitShape<DescMessage>)) as JsonObject;
    const interfaces = serving.interfaces();
    const served = interfaces === undefined ? card : withServedInterfaces(card, interfaces, "1.0");
    return fromJson(schema, serving.signer === undefined ? served : await serving.signer.sign(served));
  };
  return wrapped as unknown as H;
}
