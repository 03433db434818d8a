/**
 * The extended card signed as the public one is (D101): GetExtendedAgentCard
 * answers on every binding with the card the handler returned, in its
 * presence form and with this server's signatures. The handler is asked each
 * time, so a card that changes is signed as it is now; one that does not
 * keeps its signatures (the signer remembers recent cards).
 */
import { create, fromJson, toJson, type DescMessage, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import type { MethodSpec } from "../core/method-spec.js";
import type { CardSigner } from "./card-signing.js";

type Method = (request: unknown, context: unknown) => unknown;

/**
 * A handler with the same methods as `handler`, each bound to it, and
 * GetExtendedAgentCard's answer signed. A new object rather than a subclass
 * or a Proxy: the handler may be a class with private fields, which only its
 * own methods, called on itself, can read.
 */
export function signedExtendedCardHandler<H extends object>(handler: H, methods: Readonly<Record<string, MethodSpec>>, schema: DescMessage, signer: CardSigner): H {
  const own = handler as Record<string, unknown>;
  const wrapped: Record<string, Method> = {};
  for (const spec of Object.values(methods)) {
    const method = own[spec.localName];
    if (typeof method === "function") wrapped[spec.localName] = (method as Method).bind(handler);
  }
  const getCard = wrapped["getExtendedAgentCard"];
  if (getCard !== undefined) {
    wrapped["getExtendedAgentCard"] = async (request, context) => {
      const card = create(schema, (await getCard(request, context)) as MessageInitShape<DescMessage>);
      return fromJson(schema, await signer.sign(toJson(schema, card) as JsonObject));
    };
  }
  return wrapped as unknown as H;
}
