/**
 * What an agent decides once for every binding (spec 5.1: every binding
 * behaves the same): who the caller is, which operations its Agent Card
 * enables, and which extensions a client must ask for. The A2A profile
 * applies it before the handler is called, on JSON-RPC, HTTP+JSON and gRPC
 * alike.
 */
import type { Authenticate } from "../core/call-context.js";

export interface AgentPolicy<Principal = unknown> {
  /**
   * The card's `capabilities`: an operation it gates is refused unless its
   * capability is true (D18). When undefined nothing is gated.
   */
  readonly capabilities?: {
    readonly streaming?: boolean;
    readonly pushNotifications?: boolean;
    readonly extendedAgentCard?: boolean;
  };
  /** URIs of the card's extensions with `required: true` (spec 3.3.4). */
  readonly requiredExtensions?: readonly string[];
  /**
   * The `WWW-Authenticate` challenge of an HTTP 401 whose UnauthenticatedError names none (spec
   * 3.3.2: say which scheme is required); `serveA2AService` reads it off the card's security schemes.
   */
  readonly challenge?: string;
  /**
   * Runs before anything else of a call, so nothing is looked up for a
   * caller that is refused: returns the principal (undefined for an
   * anonymous caller), or throws UnauthenticatedError / PermissionDeniedError.
   */
  readonly authenticate?: Authenticate<Principal>;
}
