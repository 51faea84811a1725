// The package's own list of subpaths, so a new entry is smoke-tested without editing this folder.
const { exports: map } = require("platform-integration/package.json");
module.exports = Object.keys(map)
  .filter((subpath) => subpath !== "./package.json")
  .map((subpath) => `platform-integration/${subpath.slice(2)}`);
