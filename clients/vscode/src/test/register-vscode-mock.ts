// Loaded by mocha before the tests (.mocharc.json): `require('vscode')` gets ./vscode-mock.
import Module from 'module';

type Resolve = (request: string, ...rest: unknown[]) => string;
const mod = Module as unknown as { _resolveFilename: Resolve };
const original = mod._resolveFilename;
mod._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  if (request === 'vscode') {
    return require.resolve('./vscode-module');
  }
  return original.call(this, request, ...rest);
};
