// Target "ceiling-together" of bench/tasks.mjs, JSON-RPC: the bare node:http ceiling of
// bench/jsonrpc/server-ceiling.mjs answering what a task runtime answers
// (echoTaskMintedJson: the task with a minted id, its status timestamp and
// the user's message in its history), with its answers written at the end
// of their turn as ours writes them (D115; ../lib/ending-together.mjs).
import { endingTogether } from "../lib/ending-together.mjs";
import { echoTaskMintedJson } from "../lib/a2a-fixture.mjs";
import { createBenchServer as createCeiling } from "../jsonrpc/server-ceiling.mjs";

export const createBenchServer = () => endingTogether(createCeiling(echoTaskMintedJson));
