/** @type {import("jest").Config} */
export default {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  extensionsToTreatAsEsm: [".ts"],
  moduleNameMapper: {
    "^protoc-gen-a2a/runtime$": "<rootDir>/runtime/index.ts",
    "^protoc-gen-a2a/runtime/grpc$": "<rootDir>/runtime/grpc.ts",
    "^protoc-gen-a2a/runtime/codec$": "<rootDir>/runtime/codec.ts",
    "^protoc-gen-a2a/runtime/adapters$": "<rootDir>/runtime/adapters/frameworks.ts",
    "^protoc-gen-a2a/runtime/server$": "<rootDir>/runtime/server.ts",
    "^(\\.{1,2}/.*)\\.js$": "$1",
  },
  transform: {
    "^.+\\.ts$": ["ts-jest", { useESM: true }],
  },
};
