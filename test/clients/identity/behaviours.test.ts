import { createIdentityClient } from "../../../src/clients/identity/index.ts";
import { describeClientBehaviours } from "../client-behaviours.ts";

const source = { hostname: "ldap.test", baseDn: "dc=test" };
const user = '{"DN":"uid=bob,dc=test","Username":"bob","Attributes":{},"Groups":[]}';
const json = "application/json; charset=utf-8";

describeClientBehaviours("identity", [
  {
    name: "sources()",
    run: (options) => createIdentityClient(options).sources(),
    answer: { status: 200, contentType: json, body: '{"sources":[]}' },
  },
  {
    name: "login()",
    run: (options) =>
      createIdentityClient({ ...options, source }).login({ username: "bob", password: "pw" }),
    answer: { status: 200, contentType: json, body: user },
  },
  {
    name: "user()",
    run: (options) => createIdentityClient({ ...options, source }).user("bob"),
    answer: { status: 200, contentType: json, body: user },
  },
  {
    name: "exists()",
    run: (options) => createIdentityClient({ ...options, source }).exists("bob"),
    answer: { status: 200, contentType: "text/plain; charset=utf-8", body: "true" },
  },
]);
