# h-mount: an agent mounted in an app's own express/fastify/Hono/node:http server
# gets the card (ETag, 304, signed) and A2A 0.3 callers, as serveA2AService does.
# generated/ must be regenerated from this branch's plugin (the A2A factories changed):
#   rm -f generated && npm run build && PATH=$PWD/node_modules/.bin:$PATH buf generate
timeout 200 node --experimental-vm-modules node_modules/jest/bin/jest.js test/adapters/mounted-agent.test.ts
