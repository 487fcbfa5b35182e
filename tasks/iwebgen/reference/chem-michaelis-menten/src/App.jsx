import { useMemo, useState } from "react";

const KI = 5; // inhibition constant (uM) of the inhibitor
const S_MAX = 100;

// Michaelis-Menten rate with the apparent constants of each inhibition type.
function apparent(Vmax, Km, inhibition, I) {
  const factor = 1 + I / KI;
  if (inhibition === "competitive") return { V: Vmax, K: Km * factor };
  if (inhibition === "non-competitive") return { V: Vmax / factor, K: Km };
  return { V: Vmax, K: Km };
}
const rate = ({ V, K }, S) => (V * S) / (K + S);

function Slider({ label, value, min, max, step, unit, onChange }) {
  return (
    <label className="control">
      <span>{label}: <b>{value}</b> {unit}</span>
      <input type="range" aria-label={label} min={min} max={max} step={step} value={value}
        onChange={(e) => onChange(Number(e.target.value))} />
    </label>
  );
}

export default function App() {
  const [Vmax, setVmax] = useState(50);
  const [Km, setKm] = useState(10);
  const [inhibition, setInhibition] = useState("none");
  const [inhibitor, setInhibitor] = useState(5);
  const [S, setS] = useState(20);
  const [view, setView] = useState("direct");

  const base = { V: Vmax, K: Km };
  const inhibited = apparent(Vmax, Km, inhibition, inhibitor);
  const W = 560, H = 340, M = 48;

  const chart = useMemo(() => {
    if (view === "direct") {
      const yMax = Vmax * 1.15;
      const sx = (s) => M + (s / S_MAX) * (W - 2 * M);
      const sy = (v) => H - M - (v / yMax) * (H - 2 * M);
      const curve = (c) => Array.from({ length: 101 }, (_, i) => i).map((i) => `${sx(i).toFixed(1)},${sy(rate(c, i)).toFixed(1)}`).join(" ");
      return { sx, sy, base: curve(base), inhibited: curve(inhibited), xLabel: "[S] (uM)", yLabel: "v (uM/s)" };
    }
    // Lineweaver-Burk: 1/v = (K/V)(1/[S]) + 1/V, drawn for 1/[S] in [-1/K, 1].
    const lineYMax = Math.max(inhibited.K / inhibited.V + 1 / inhibited.V, Km / Vmax + 1 / Vmax) * 1.1;
    const xMin = -1 / Math.min(Km, inhibited.K) * 1.1;
    const sx = (x) => M + ((x - xMin) / (1 - xMin)) * (W - 2 * M);
    const sy = (y) => H - M - (y / lineYMax) * (H - 2 * M);
    const line = (c) => `${sx(-1 / c.K).toFixed(1)},${sy(0).toFixed(1)} ${sx(1).toFixed(1)},${sy(c.K / c.V + 1 / c.V).toFixed(1)}`;
    return { sx, sy, base: line(base), inhibited: line(inhibited), xLabel: "1/[S] (1/uM)", yLabel: "1/v (s/uM)" };
  }, [view, Vmax, Km, inhibited.V, inhibited.K]);

  const probeRate = rate(inhibition === "none" ? base : inhibited, S);

  return (
    <div className="app">
      <style>{`
        .app { font-family: Georgia, serif; display: flex; gap: 24px; padding: 24px; background: #fbfbfd; color: #1b1f3a; min-height: 100vh; }
        .card { width: 280px; background: #fff; border-radius: 10px; box-shadow: 0 1px 4px rgba(0,0,0,.12); padding: 18px; }
        .control { display: block; margin-bottom: 14px; font-size: 14px; }
        .control input, .control select { width: 100%; }
        .readout { font-size: 15px; margin-top: 8px; }
        button { padding: 6px 12px; }
      `}</style>
      <div className="card">
        <h1 style={{ fontSize: 19 }}>Michaelis-Menten kinetics</h1>
        <Slider label="Vmax" value={Vmax} min={1} max={100} step={1} unit="uM/s" onChange={setVmax} />
        <Slider label="Km" value={Km} min={0.5} max={50} step={0.5} unit="uM" onChange={setKm} />
        <label className="control">Inhibition
          <select aria-label="Inhibition type" value={inhibition} onChange={(e) => setInhibition(e.target.value)}>
            <option value="none">none</option>
            <option value="competitive">competitive</option>
            <option value="non-competitive">non-competitive</option>
          </select>
        </label>
        <Slider label="Inhibitor [I]" value={inhibitor} min={0} max={20} step={1} unit="uM" onChange={setInhibitor} />
        <Slider label="Substrate [S]" value={S} min={0} max={100} step={1} unit="uM" onChange={setS} />
        <div className="readout" data-rate={probeRate.toFixed(3)}>v([S] = {S} uM) = {probeRate.toFixed(2)} uM/s</div>
        <div className="readout">apparent Km {inhibited.K.toFixed(2)} uM, apparent Vmax {inhibited.V.toFixed(2)} uM/s</div>
        <button onClick={() => setView((v) => (v === "direct" ? "lineweaver-burk" : "direct"))}>
          {view === "direct" ? "Show Lineweaver-Burk plot" : "Show direct plot"}
        </button>
      </div>
      <svg width={W} height={H} role="img" aria-label={`${view} plot`} style={{ background: "#fff", borderRadius: 10 }}>
        <line x1={M} y1={H - M} x2={W - M} y2={H - M} stroke="#888" />
        <line x1={M} y1={M / 2} x2={M} y2={H - M} stroke="#888" />
        <text x={W / 2} y={H - 10} textAnchor="middle" fontSize="13">{chart.xLabel}</text>
        <text x={8} y={20} fontSize="13">{chart.yLabel}</text>
        <polyline points={chart.base} fill="none" stroke="#1f3c88" strokeWidth="2.5" />
        {inhibition !== "none" && <polyline points={chart.inhibited} fill="none" stroke="#e67e22" strokeWidth="2.5" strokeDasharray="6 4" />}
        {view === "direct" && (
          <g>
            <line x1={M} x2={W - M} y1={chart.sy(Vmax)} y2={chart.sy(Vmax)} stroke="#1f3c88" strokeDasharray="3 4" />
            <circle cx={chart.sx(Km)} cy={chart.sy(Vmax / 2)} r="4" fill="#1f3c88" />
            <circle cx={chart.sx(S)} cy={chart.sy(probeRate)} r="6" fill="#c0392b" />
          </g>
        )}
      </svg>
    </div>
  );
}
