export default function App() {
  return <main className="p-4"><h1 className="text-2xl font-bold">Template</h1></main>;
}
