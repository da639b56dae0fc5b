#!/usr/bin/env node
// Prints a free TCP port on 127.0.0.1 (the OS picks it), so the e2e server never collides with
// `make serve` on 8080 or with another test run on the same machine.
'use strict';
const s = require('net').createServer();
s.listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });
