/** @type {import("jest").Config} */
export default {
  testEnvironment: "node",
  // Jest's default on two cores is one worker; most suites wait on sockets,
  // child processes (buf, tsc, python) or the plugin, so two workers on the
  // two cores this project's machines have keep both busy and about halve
  // the wall time.
  maxWorkers: 2,
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: {
    "^protoc-gen-a2a/runtime$": "<rootDir>/runtime/index.ts",
    "^protoc-gen-a2a/runtime/internal$": "<rootDir>/runtime/internal.ts",
    "^protoc-gen-a2a/runtime/grpc$": "<rootDir>/runtime/grpc.ts",
    "^protoc-gen-a2a/runtime/adapters$": "<rootDir>/runtime/adapters/frameworks.ts",
    "^protoc-gen-a2a/runtime/server$": "<rootDir>/runtime/server.ts",
    "^protoc-gen-a2a/runtime/tasks$": "<rootDir>/runtime/tasks.ts",
    "^(\\.{1,2}/.*)\\.js$": "$1",
  },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true }],
  },
};
