// What `require('vscode')` returns in tests: the mock, padded so vscode-languageclient can load
// and build a client: any other top-level name is an empty class, and any other member of a
// namespace (workspace.onDidOpenTextDocument, …) subscribes to nothing or returns undefined.
import * as mock from './vscode-mock';

type Bag = Record<string | symbol, unknown>;
const padded = new Map<string | symbol, unknown>();

function namespace(target: Bag): Bag {
  return new Proxy(target, {
    get(t, name) {
      if (name in t) {
        return t[name];
      }
      if (typeof name === 'string' && (name.startsWith('on') || name.startsWith('register'))) {
        return () => new mock.Disposable();
      }
      return () => undefined;
    },
  });
}

export = new Proxy(mock as unknown as Bag, {
  get(target, name) {
    if (!padded.has(name)) {
      const value = target[name];
      if (value === undefined) {
        padded.set(name, class {});
      } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        padded.set(name, namespace(value as Bag));
      } else {
        padded.set(name, value);
      }
    }
    return padded.get(name);
  },
});
