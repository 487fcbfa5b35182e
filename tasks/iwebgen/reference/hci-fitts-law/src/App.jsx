import { useRef, useState } from "react";

// Shannon formulation of the index of difficulty (bits).
const indexOfDifficulty = (D, W) => Math.log2(D / W + 1);

function Slider({ label, value, min, max, step, unit, onChange }) {
  return (
    <label className="control">
      <span>{label}: <b>{value}</b> {unit}</span>
      <input type="range" aria-label={label} min={min} max={max} step={step} value={value}
        onChange={(e) => onChange(Number(e.target.value))} />
    </label>
  );
}

function fit(trials) {
  if (trials.length < 2) return null;
  const n = trials.length;
  const mx = trials.reduce((s, t) => s + t.id, 0) / n;
  const my = trials.reduce((s, t) => s + t.mt, 0) / n;
  const sxx = trials.reduce((s, t) => s + (t.id - mx) ** 2, 0);
  if (sxx === 0) return { a: my, b: 0 };
  const b = trials.reduce((s, t) => s + (t.id - mx) * (t.mt - my), 0) / sxx;
  return { a: my - b * mx, b };
}

export default function App() {
  const [D, setD] = useState(300);
  const [W, setW] = useState(40);
  const [a, setA] = useState(100);
  const [b, setB] = useState(150);
  const [active, setActive] = useState(0);
  const [trials, setTrials] = useState([]);
  const last = useRef(null);

  const id = indexOfDifficulty(D, W);
  const arenaW = 700, arenaH = 160;
  const centers = [arenaW / 2 - D / 2, arenaW / 2 + D / 2];

  const hit = (index) => {
    if (index !== active) return;
    const now = performance.now();
    if (last.current !== null) {
      setTrials((ts) => [...ts, { id, mt: Math.round(now - last.current), D, W }]);
    }
    last.current = now;
    setActive(1 - index);
  };

  const model = fit(trials);
  const throughput = trials.length ? trials.reduce((s, t) => s + t.id / (t.mt / 1000), 0) / trials.length : null;
  const CW = 420, CH = 240, M = 40, IDMAX = 7, MTMAX = 1500;
  const cx = (x) => M + (x / IDMAX) * (CW - 2 * M);
  const cy = (y) => CH - M - (Math.min(y, MTMAX) / MTMAX) * (CH - 2 * M);

  return (
    <div className="app">
      <style>{`
        .app { font-family: system-ui, sans-serif; padding: 20px; background: #fafbfc; color: #17202a; min-height: 100vh; }
        .arena { position: relative; width: ${arenaW}px; height: ${arenaH}px; background: #fff; border: 1px solid #d5dae0; border-radius: 8px; }
        .target { position: absolute; top: 20px; height: ${arenaH - 40}px; border: none; border-radius: 4px; cursor: pointer; }
        .row { display: flex; gap: 24px; margin-top: 16px; }
        .control { display: block; font-size: 14px; margin-bottom: 10px; width: 240px; }
        .control input { width: 100%; }
        ol { font-size: 12px; max-height: 200px; overflow: auto; }
      `}</style>
      <h1 style={{ fontSize: 20 }}>Fitts' law pointing test</h1>
      <p>ID = log2(D/W + 1) = <b data-id={id.toFixed(3)}>{id.toFixed(2)} bits</b>. Click the blue target, then the other one.</p>
      <div className="arena">
        {centers.map((c, index) => (
          <button key={index} className="target" aria-label={`Target ${index + 1}`} onClick={() => hit(index)}
            style={{ left: c - W / 2, width: W, background: index === active ? "#1565c0" : "#cfd8dc" }} />
        ))}
      </div>
      <div className="row">
        <div>
          <Slider label="Distance D" value={D} min={50} max={600} step={10} unit="px" onChange={setD} />
          <Slider label="Width W" value={W} min={10} max={120} step={2} unit="px" onChange={setW} />
          <Slider label="Intercept a" value={a} min={0} max={500} step={10} unit="ms" onChange={setA} />
          <Slider label="Slope b" value={b} min={50} max={300} step={5} unit="ms/bit" onChange={setB} />
          <button onClick={() => { setTrials([]); last.current = null; }}>Clear results</button>
          <p style={{ fontSize: 13 }}>
            {trials.length} trials{model ? `; fitted MT = ${model.a.toFixed(0)} + ${model.b.toFixed(0)} ID` : ""}
            {throughput ? `; throughput ${throughput.toFixed(2)} bits/s` : ""}
          </p>
        </div>
        <svg width={CW} height={CH} role="img" aria-label="movement time against index of difficulty" style={{ background: "#fff" }}>
          <line x1={M} y1={CH - M} x2={CW - M} y2={CH - M} stroke="#888" />
          <line x1={M} y1={10} x2={M} y2={CH - M} stroke="#888" />
          <text x={CW / 2} y={CH - 8} fontSize="12" textAnchor="middle">ID (bits)</text>
          <text x={4} y={14} fontSize="12">MT (ms)</text>
          <line x1={cx(0)} y1={cy(a)} x2={cx(IDMAX)} y2={cy(a + b * IDMAX)} stroke="#1565c0" strokeDasharray="5 4" />
          {model && <line x1={cx(0)} y1={cy(model.a)} x2={cx(IDMAX)} y2={cy(model.a + model.b * IDMAX)} stroke="#2e7d32" />}
          {trials.map((t, i) => <circle key={i} cx={cx(t.id)} cy={cy(t.mt)} r="3.5" fill="#c62828" />)}
          <line x1={cx(id)} x2={cx(id)} y1={10} y2={CH - M} stroke="#aaa" strokeDasharray="2 3" />
        </svg>
        <ol aria-label="movement times">{trials.map((t, i) => <li key={i}>{t.mt} ms at ID {t.id.toFixed(2)}</li>)}</ol>
      </div>
    </div>
  );
}
