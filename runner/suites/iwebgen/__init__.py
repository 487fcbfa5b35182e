"""suite=iwebgen: I-WebGenBench, interactive scientific web apps generated from paper-derived specifications."""
