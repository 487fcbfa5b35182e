export default function App() {
  return <main><h1>Template</h1></main>;
}
