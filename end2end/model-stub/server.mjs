// A slow OpenAI-compatible model for the live-narration spec: every chat completion
// is streamed as server-sent events, a few characters at a time, so the browser can be
// watched while Luna's answer is still being written. No dependencies; run with
// `node end2end/model-stub/server.mjs <port>`.
import http from 'node:http';

const port = Number(process.argv[2] ?? 3199);
const PIECE_CHARS = 6;
const PIECE_MS = 120;

// Four sentences without figures or data markers: the server shows each one as soon
// as it is complete and checked.
const NARRATION =
  'Claro, te cuento cómo trabajo contigo. ' +
  'Primero busco proveedores con los criterios que me das. ' +
  'Después te propongo guardarlos en tu lista. ' +
  'Tú decides cada paso antes de que pase.';

function chunk(delta, finish = null) {
  return `data: ${JSON.stringify({
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
    res.writeHead(404).end();
    return;
  }
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const content = JSON.stringify({ intent: { tipo: 'responder' }, narracion: NARRATION });
    const pieces = [];
    for (let i = 0; i < content.length; i += PIECE_CHARS) pieces.push(content.slice(i, i + PIECE_CHARS));
    res.write(chunk({ role: 'assistant', reasoning_content: 'Explico cómo trabajo. ' }));
    let i = 0;
    const timer = setInterval(() => {
      if (i < pieces.length) {
        res.write(chunk({ content: pieces[i++] }));
        return;
      }
      clearInterval(timer);
      res.write(chunk({}, 'stop'));
      res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 50 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    }, PIECE_MS);
    res.on('close', () => clearInterval(timer));
  });
});
server.listen(port, '127.0.0.1');
