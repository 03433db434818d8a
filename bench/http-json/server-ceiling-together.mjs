// Target "ceiling-together" (opt-in): the ceiling, with its answers written
// at the end of the turn they finish in, as ours writes them (D115; see
// ../lib/ending-together.mjs).
import { endingTogether } from "../lib/ending-together.mjs";
import { createBenchServer as createCeiling } from "./server-ceiling.mjs";

export const createBenchServer = () => endingTogether(createCeiling());
