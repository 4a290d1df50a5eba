// Injects a Node single-executable blob into a copy of a node binary with postject's API (no CLI
// dependencies). Run it with the node that made the blob:  node sea_inject.cjs <postject/dist/api.js> <exe> <blob>
"use strict";
const { readFileSync } = require("node:fs");
const [api, exe, blob] = process.argv.slice(2);
if (!api || !exe || !blob) {
  console.error("usage: node sea_inject.cjs <postject api.js> <executable> <blob>");
  process.exit(64);
}
// The fuse string is Node's, from its single-executable docs; postject flips its trailing 0 to 1.
require(api)
  .inject(exe, "NODE_SEA_BLOB", readFileSync(blob), { sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2" })
  .then(() => process.exit(0), (e) => {
    console.error(`sea_inject: ${e && e.message ? e.message : e}`);
    process.exit(1);
  });
