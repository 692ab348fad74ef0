"""Image summaries: arrays in any ``dataformats`` to an HWC RGB image, PNG-encoded with Pillow.

Floating images hold values in [0, 1], ``uint8`` images in [0, 255] (out-of-range values are
clipped); a batch (``NCHW`` & co.) is tiled into a grid of 8 columns; one channel is repeated
into three. Matplotlib figures are rendered with the Agg canvas.
"""

import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from ._summary import make_np

__all__ = ["image", "figure_to_image", "to_hwc"]


def _grid(nchw, ncols=8):
    """Tile ``N x {1,3} x H x W`` images into one ``3 x H*rows x W*cols`` image, row by row."""
    if nchw.shape[1] == 1:
        nchw = np.repeat(nchw, 3, axis=1)
    if nchw.ndim != 4 or nchw.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    padded = np.zeros((nrows * ncols, 3, h, w), dtype=nchw.dtype)
    padded[:n] = nchw
    return padded.reshape(nrows, ncols, 3, h, w).transpose(2, 0, 3, 1, 4).reshape(
        3, nrows * h, ncols * w)


def to_hwc(array, dataformats):
    """``array`` laid out as ``dataformats`` (``NCHW``, ``CHW``, ``HWC``, ``HW``, ...) to HWC."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if array.ndim != len(dataformats):
        raise AssertionError(
            f"size of input tensor and input format are different. tensor shape: "
            f"{array.shape}, input_format: {dataformats}")
    fmt = dataformats.upper()
    if len(fmt) == 4:
        return _grid(array.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    hw = array.transpose([fmt.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """A ``Summary`` with one PNG image."""
    from PIL import Image

    hwc = to_hwc(make_np(tensor), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = hwc.shape
    img = Image.fromarray(hwc)
    if rescale != 1:
        img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    img.save(out, format="PNG")
    proto = Summary.Image(height=height, width=width, colorspace=channels,
                          encoded_image_string=out.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def figure_to_image(figures, close=True):
    """Render a matplotlib figure (CHW ``uint8``) or a list of them (NCHW)."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(fig):
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        w, h = fig.canvas.get_width_height()
        rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        if close:
            plt.close(fig)
        return np.moveaxis(rgb, 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
