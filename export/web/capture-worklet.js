// AudioWorklet: hands the microphone's first channel to the page in blocks of about 20 ms.
class Capture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.pending = [];
    this.size = 0;
    this.block = Math.round(sampleRate / 50);
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) {
      this.pending.push(channel.slice());
      this.size += channel.length;
      if (this.size >= this.block) {
        const out = new Float32Array(this.size);
        let at = 0;
        for (const part of this.pending) {
          out.set(part, at);
          at += part.length;
        }
        this.port.postMessage(out, [out.buffer]);
        this.pending = [];
        this.size = 0;
      }
    }
    return true;
  }
}

registerProcessor("speechattn-capture", Capture);
