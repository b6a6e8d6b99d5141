'use strict';
// npm's postinstall: puts this machine's native `anvil` and `anvil-hook` in bin/, over the
// node launchers, so that what npm linked onto PATH (and what the plugin's hooks call) is the
// native program. It never fails the install: without it the launchers still work.

const native = require('./lib/native.js');

try {
  native.place(__dirname);
} catch (e) {
  process.stderr.write(
    `anvil: ${e.message}\n` +
      'anvil: `anvil` and `anvil-hook` still work through their node launcher, more slowly; ' +
      '`anvil doctor` says more\n'
  );
}
