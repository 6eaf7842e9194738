// AudioWorklet processor "speechattn-capture": hands its input's first channel to the main thread in blocks
// ({samples, frame}: frame = the AudioContext sample frame of samples[0]), every blockMs (processorOptions,
// default 20 ms).  A quantum with no input (nothing connected, or a source that stopped) is sent as silence, so
// the samples sent are the context's clock: sample n of the stream is context frame first frame + n.  The model
// runs on the main thread, not here (headaudio.mjs says why).
class Capture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const blockMs = options?.processorOptions?.blockMs ?? 20;
    this.blockSamples = Math.max(128, Math.round((sampleRate * blockMs) / 1000));
    this.pending = [];
    this.size = 0;
    this.firstFrame = 0; // context frame of the pending block's first sample
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    const quantum = channel ? channel.slice() : new Float32Array(128);
    if (this.size === 0) this.firstFrame = currentFrame;
    this.pending.push(quantum);
    this.size += quantum.length;
    if (this.size >= this.blockSamples) {
      const samples = new Float32Array(this.size);
      let at = 0;
      for (const part of this.pending) {
        samples.set(part, at);
        at += part.length;
      }
      this.port.postMessage({ samples, frame: this.firstFrame }, [samples.buffer]);
      this.pending = [];
      this.size = 0;
    }
    return true;
  }
}

registerProcessor("speechattn-capture", Capture);
