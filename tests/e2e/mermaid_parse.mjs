// Parse Mermaid diagrams with the real parser (the mermaid package JupyterLab bundles, same
// version): stdin is a JSON list of {"id", "text"}, stdout a JSON list of
// {"id", "type", "error"} — "error" is null when the diagram parses.
// Used by tests/notebooks/test_mermaid.py; run from this folder after `npm ci`.
import mermaid from "mermaid";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const diagrams = JSON.parse(Buffer.concat(chunks).toString("utf8"));

mermaid.initialize({ startOnLoad: false, logLevel: "fatal" });
const results = [];
for (const { id, text } of diagrams) {
  try {
    const parsed = await mermaid.parse(text);
    results.push({ id, type: parsed.diagramType, error: null });
  } catch (error) {
    results.push({ id, type: null, error: String(error?.message ?? error) });
  }
}
process.stdout.write(JSON.stringify(results));
