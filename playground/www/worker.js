// The playground's evaluator: runs the WebAssembly module off the page's thread, so that a
// hostile expression, schema or manifest cannot freeze the tab. The page ends this worker
// when a request runs past the time limit and starts a new one.
//
// Messages in: {id, request} (request: the JSON text of a mode's request).
// Messages out: {ready: info} once loaded, then {id, result} (result: JSON text) per request,
// or {id, crashed: message} when the module trapped (it is not used again after that).
import init, { info, run } from './pkg/celerity_playground.js';

let broken = null;

const loaded = init({ module_or_path: new URL('./pkg/celerity_playground_bg.wasm', import.meta.url) })
  .then(() => postMessage({ ready: info() }))
  .catch((e) => {
    broken = String(e && e.message ? e.message : e);
    postMessage({ failed: broken });
  });

self.onmessage = async (event) => {
  const { id, request } = event.data;
  await loaded;
  if (broken) {
    postMessage({ id, crashed: broken });
    return;
  }
  try {
    postMessage({ id, result: run(request) });
  } catch (e) {
    // A trap (out of memory, a stack exhausted): the instance's state is lost.
    broken = String(e && e.message ? e.message : e);
    postMessage({ id, crashed: broken });
  }
};
