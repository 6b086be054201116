// `node --import ./test/support/traces-ts-register.mjs script.ts`: see traces-ts-hooks.mjs.
import { register } from 'node:module';

register('./traces-ts-hooks.mjs', import.meta.url);
