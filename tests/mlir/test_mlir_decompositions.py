"""Operators the torch dialect lacks, decomposed by tsjit (tsjit/mlir/decompositions.py), lowered to linalg and
run on IREE against eager: one program holding several of them, so that IREE compiles once."""

from __future__ import annotations

import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit.mlir import iree


def unknown_to_torch_mlir(x: torch.Tensor, y: torch.Tensor):
    signs = torch.sign(y)
    std, mean = torch.std_mean(x)
    return (torch.diff(x, 1, 0), torch.nn.functional.soft_margin_loss(x, signs), torch.median(x),
            torch.hypot(x, y), torch.nansum(x, [1]), std, mean, torch.equal(x, x), torch.isin(x, y))


def test_decomposed_operators_on_iree():
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    y[0, 0] = x[1, 1]
    run = iree.compile(tsjit.mlir.compile(tsjit.script(unknown_to_torch_mlir), [x, y],
                                          output_type="linalg-on-tensors"))
    got, expected = run(x, y), unknown_to_torch_mlir(x, y)
    assert got[7] is True
    for ours, theirs in zip(got[:7] + got[8:], expected[:7] + expected[8:]):
        assert_close(ours, theirs)


def multi_margin_losses(x: torch.Tensor, target: torch.Tensor, weight: torch.Tensor, scalar: torch.Tensor,
                        row: torch.Tensor, label: torch.Tensor):
    f = torch.nn.functional
    return (f.multi_margin_loss(x, target), f.multi_margin_loss(x, target, p=2, margin=0.5, weight=weight,
                                                                reduction="none"),
            f.multi_margin_loss(scalar, label - label), f.multi_margin_loss(row, label, reduction="none"))


def test_multi_margin_loss_on_iree():
    """Not in the torch dialect (op_db's sample: a 0-d input, one class): rows, a single row and a 0-d input, with
    p = 2, a margin and class weights."""
    inputs = (torch.randn(4, 5), torch.tensor([0, 3, 4, 1]), torch.rand(5), torch.randn(()), torch.randn(5),
              torch.tensor(2))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(multi_margin_losses), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), multi_margin_losses(*inputs))


def nearest_exact_and_trilinear(line: torch.Tensor, image: torch.Tensor, volume: torch.Tensor):
    f = torch.nn.functional
    return (f.interpolate(line, (3,), mode="nearest-exact"),
            f.interpolate(line, scale_factor=1.7, mode="nearest-exact"),
            f.interpolate(image, (5, 3), mode="nearest-exact"), f.interpolate(volume, (3, 5, 2), mode="nearest-exact"),
            f.interpolate(volume, (3, 3, 3), mode="trilinear", align_corners=True),
            f.interpolate(volume, scale_factor=1.5, mode="trilinear"))


def test_nearest_exact_and_trilinear_interpolation_on_iree():
    """Not in the torch dialect (op_db's interpolate.nearest-exact and .trilinear): to sizes and by scale factors,
    down and up, in one to three dimensions."""
    inputs = (torch.randn(2, 3, 4), torch.randn(2, 3, 4, 4), torch.randn(2, 3, 4, 4, 4))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(nearest_exact_and_trilinear), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), nearest_exact_and_trilinear(*inputs))


def indexing_and_statistics(x: torch.Tensor, v: torch.Tensor, index: torch.Tensor, boundaries: torch.Tensor):
    return (torch.addmv(v[:4], x, v, beta=0.5, alpha=2), torch.index_add(x, 0, index, x[:2], alpha=-1),
            torch.index_reduce(x, 1, index, x[:, :2], "amax"), torch.searchsorted(boundaries, x, right=True),
            torch.take_along_dim(x, torch.argsort(x, 1), 1), torch.histc(x, bins=4, min=-1, max=1),
            torch.cov(x), torch.lgamma(x), torch.mvlgamma(x.abs() + 2, 3), torch.nanmedian(v))


def sizes_and_lists(x: torch.Tensor, y: torch.Tensor):
    return (torch.kron(x, y), torch.inner(x, y), torch.fft.fftshift(x), torch.squeeze(x.unsqueeze(1), [1, 2]),
            torch.linalg.vander(x[0], N=3), torch.trapezoid(x, y),
            torch.linalg.matrix_power(x[:, :3], 3), torch.expand_copy(x[:1], [3, 5]), torch.linalg.norm(x),
            torch.log_softmax(x, 0, dtype=torch.float64))


def test_decompositions_of_indexing_and_statistics_on_iree():
    x, v = torch.randn(4, 5), torch.randn(5)
    v[2] = float("nan")
    inputs = (x, v, torch.tensor([3, 0]), torch.tensor([-1.0, 0.0, 0.5]))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(indexing_and_statistics), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), indexing_and_statistics(*inputs))


def test_decompositions_over_sizes_and_lists_on_iree():
    """Definitions whose loops and comprehensions run over sizes (unrolled once types are refined)."""
    x, y = torch.randn(3, 5), torch.randn(3, 5)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(sizes_and_lists), [x, y], output_type="linalg-on-tensors"))
    assert_close(run(x, y), sizes_and_lists(x, y))


def views_signs_and_losses(x: torch.Tensor, y: torch.Tensor, scalar: torch.Tensor, target: torch.Tensor):
    return (torch.clamp_max(x, y), torch.clamp_min(x, y), torch.alias_copy(x), torch.t_copy(x),
            torch.squeeze_copy(x.unsqueeze(1)), torch.log10(x.abs()), torch.copysign(x, y), torch.signbit(y),
            torch.logsumexp(scalar, [0], True), torch.argmin(x), torch.argmax(x, keepdim=True), torch.vsplit(x, 2)[1],
            torch.nn.functional.nll_loss(x, target, reduction="none"),
            torch.nn.functional.nll_loss(x.unsqueeze(-1), target.unsqueeze(-1)),
            torch.nn.functional.dropout2d(x.unsqueeze(0), 0.0, True),
            torch.nn.functional.alpha_dropout(x, 0.0, True), torch.erfinv(torch.tanh(x)), torch.erfinv(torch.sign(y)),
            torch.isfinite(torch.log(x)), torch.isfinite(target),
            torch.nn.functional.poisson_nll_loss(x, y.abs() * 3, full=True),
            torch.nn.functional.poisson_nll_loss(x.abs(), y.abs() * 3, log_input=False, full=True, reduction="none"))


def test_decompositions_of_views_signs_and_losses_on_iree():
    """Operators torch-mlir defines but linalg or IREE do not lower (clamp_max.Tensor, the *_copy views, log10,
    copysign, logsumexp of a 0-d tensor, argmin over all elements, nll_loss_nd, dropout with p = 0, erfinv,
    isfinite, poisson_nll_loss with Stirling's term)."""
    x, y = torch.randn(4, 5), torch.randn(4, 5)
    y[0, 0], y[0, 1], x[1, 1] = -0.0, 0.0, 0.0
    inputs = (x, y, torch.tensor(0.5), torch.tensor([0, 4, 2, 1]))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(views_signs_and_losses), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), views_signs_and_losses(*inputs))


def copies_scatters_and_patches(x: torch.Tensor, cube: torch.Tensor, diagonal: torch.Tensor, image: torch.Tensor):
    F = torch.nn.functional
    return (torch.view_copy(x, [5, 4]), torch.permute_copy(cube, [2, 0, 1]), torch.unsqueeze_copy(x, -1),
            torch.transpose_copy(cube, 0, 2), torch.diagonal_scatter(x, diagonal, 1),
            torch.diagonal_scatter(x, diagonal[:3], -1), torch.diagonal_scatter(cube, cube[:, 0, :3], 0, 1, 2),
            torch.as_strided_scatter(x, cube[0, :2, :3], [2, 3], [1, 2], 3),
            F.unfold(image, 2), F.unfold(image, [2, 3], dilation=[2, 1], padding=1, stride=[1, 2]),
            F.unfold(image[0], 3, padding=[0, 1]))


def test_decompositions_of_copies_scatters_and_patches_on_iree():
    """The *_copy views, diagonal_scatter, as_strided_scatter and im2col (F.unfold), which torch-mlir defines but
    linalg does not lower (it then stops on their `torch.constant.int` arguments)."""
    torch.manual_seed(0)
    inputs = (torch.randn(4, 5), torch.randn(2, 3, 4), torch.randn(4), torch.randn(2, 3, 5, 6))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(copies_scatters_and_patches), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), copies_scatters_and_patches(*inputs))


def products_blocks_and_distances(a: torch.Tensor, b: torch.Tensor, v: torch.Tensor, points: torch.Tensor):
    return (torch.cross(a, b), torch.cross(a.t(), b.t(), dim=0), torch.linalg.multi_dot([a, b.t(), a]),
            torch.linalg.multi_dot([v[:4], a, v[:3]]), torch.linalg.multi_dot([v[:4], a, b.t()]),
            torch.block_diag(a, v, v[0], b[:1]), torch.cdist(points, points[:2], 0.0),
            torch.cdist(points, points[1:], 1.0), torch.cdist(points, points, 2.0),
            torch.cdist(points, points[:3], float("inf")))


def test_products_blocks_and_distances_on_iree():
    """cross (its deprecated default dimension: the first of size 3), multi_dot (vectors at its ends),
    block_diag of 2-d, 1-d and 0-d blocks, and cdist for p = 0, 1, 2 and inf: not in the torch dialect."""
    torch.manual_seed(0)
    inputs = (torch.randn(4, 3), torch.randn(4, 3), torch.randn(5), torch.randn(2, 4, 3))
    inputs[3][0, 1, 2] = inputs[3][0, 0, 2]
    run = iree.compile(tsjit.mlir.compile(tsjit.script(products_blocks_and_distances), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), products_blocks_and_distances(*inputs))


def cumulative_logsumexp(x: torch.Tensor, scalar: torch.Tensor):
    return torch.logcumsumexp(x, 0), torch.logcumsumexp(x, -1), torch.logcumsumexp(scalar, 0)


def test_logcumsumexp_of_large_and_infinite_values_on_iree():
    """logcumsumexp shifted by each prefix's maximum: torch-mlir's log(cumsum(exp(x))) gives inf for 10000 (op_db's
    sample); -inf and inf entries keep their eager values."""
    x = torch.randn(4, 5)
    x[0, 0], x[1, 2], x[2, 1], x[3, 3] = 10000.0, -9000.0, float("-inf"), float("inf")
    inputs = (x, torch.tensor(3.0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(cumulative_logsumexp), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), cumulative_logsumexp(*inputs))


def determinants(a: torch.Tensor, empty: torch.Tensor):
    return torch.linalg.det(a), torch.linalg.slogdet(a), torch.logdet(a), torch.det(empty)


def test_determinants_by_lu_with_partial_pivoting_on_iree():
    """det, slogdet and logdet (not in the torch dialect) by Gaussian elimination unrolled over the static size:
    a batch with a negative determinant, a singular matrix and one needing a row exchange; and a 0x0 matrix."""
    torch.manual_seed(0)
    a = torch.randn(4, 3, 3)
    a[2, 2] = a[2, 0]  # (a repeated row stays repeated through elimination: its pivot is exactly 0, as LAPACK's)
    a[3, 0, 0] = 0.0
    inputs = (a, torch.randn(0, 0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(determinants), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), tuple(determinants(*inputs)))


def pads_upsampling_and_shrinking(x: torch.Tensor, volume: torch.Tensor):
    F = torch.nn.functional
    return (F.pad(x, [2, 1, 1, 0], mode="reflect"), F.pad(x, [1, 2, 0, 1], mode="replicate"),
            F.pad(volume, [1, 1, 1, 0, 0, 1], mode="reflect"), F.pad(x, [1, 0, 0, 1], mode="circular"),
            F.interpolate(x, scale_factor=2.0), F.interpolate(x, size=[5, 7], mode="bilinear"),
            F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True), F.softshrink(x, 0.5),
            F.upsample_bilinear(x, size=(2, 3)))


def test_pads_upsampling_and_softshrink_on_iree():
    """pad in reflect and replicate modes and F.interpolate (StableHLO lowers neither; linalg no bilinear
    upsampling) as gathers, and softshrink (torch-mlir's decomposition is wrong below -lambd), on two backends."""
    torch.manual_seed(0)
    inputs = (torch.randn(1, 2, 3, 4), torch.randn(1, 1, 2, 3, 4))
    expected = pads_upsampling_and_shrinking(*inputs)
    for backend in ("linalg-on-tensors", "stablehlo"):
        run = iree.compile(tsjit.mlir.compile(tsjit.script(pads_upsampling_and_shrinking), list(inputs),
                                              output_type=backend))
        assert_close(run(*inputs), expected)


class ReflectedConvolutionAndAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect")

    def forward(self, x: torch.Tensor, q: torch.Tensor, mask: torch.Tensor, bias: torch.Tensor):
        F = torch.nn.functional
        return (self.conv(x), F.scaled_dot_product_attention(q, q, q, mask),
                F.scaled_dot_product_attention(q, q, q, bias, scale=0.5),
                F.scaled_dot_product_attention(q, q, q, is_causal=True))


def test_list_attribute_pads_and_attention_on_stablehlo():
    """A read-only list attribute (Conv2d's reflect pads) folds to a constant, so that pad is decomposed;
    scaled_dot_product_attention, which only linalg lowers, with a boolean mask, a float mask and causal."""
    torch.manual_seed(0)
    module = ReflectedConvolutionAndAttention().eval()
    inputs = (torch.randn(1, 2, 5, 5), torch.randn(2, 3, 4), torch.rand(2, 3, 3) > 0.3, torch.randn(3, 3))
    inputs[2][:, :, 0] = True  # (no row masked entirely: eager's NaN there is not a question for the compiler)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(module), list(inputs), output_type="stablehlo"))
    with torch.no_grad():
        assert_close(run(*inputs), module(*inputs))


def pools_interpolation_and_chunks(x: torch.Tensor, row: torch.Tensor, scores: torch.Tensor, labels: torch.Tensor,
                                   grid: torch.Tensor):
    F = torch.nn.functional
    return (F.adaptive_avg_pool2d(x, (5, 7)), F.adaptive_max_pool1d(row, 3, True), F.adaptive_max_pool1d(row, 4),
            F.adaptive_max_pool2d(x, (3, 5), True),
            F.pad(x, [-4, 5, 0, 0], mode="replicate"), F.pad(x, [-2, 3, 1, -1], mode="reflect"),
            F.interpolate(row, size=[7], mode="linear", align_corners=True),
            F.interpolate(row, scale_factor=1.5, mode="linear"),
            F.interpolate(x, size=[3, 11], mode="bicubic", align_corners=True),
            F.interpolate(x, scale_factor=0.75, mode="bicubic"),
            torch._chunk_cat([row, row[:, :, :2]], -1, 3), torch._chunk_cat([x, x[:, :, :, :5]], 2, 5),
            F.multilabel_margin_loss(scores, labels), F.multilabel_margin_loss(scores, labels, reduction="none"),
            F.multilabel_margin_loss(scores[1], labels[1], reduction="sum"),
            torch.as_strided_copy(x, (3, 2), (2, 5), 1), F.grid_sample(x, grid, align_corners=False),
            F.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=True))


def test_adaptive_pools_interpolation_chunks_and_multilabel_margin_on_iree():
    """Adaptive pools to sizes that do not divide the input's and pads that cut (torch-mlir's lowerings have the
    wrong extent), and operators the torch dialect lacks: linear and bicubic upsampling, _chunk_cat (zero-padded
    chunks), multilabel_margin_loss (labels up to the first -1), as_strided_copy of an input, and grid sampling
    (torch-mlir's lowering of grid_sampler gives wrong values)."""
    torch.manual_seed(0)
    inputs = (torch.randn(1, 2, 8, 8), torch.randn(2, 3, 5), torch.randn(3, 5),
              torch.tensor([[1, 3, -1, 0, 0], [4, 4, 2, 0, 1], [-1, 2, 3, 1, 0]]), torch.rand(1, 4, 3, 2) * 2.4 - 1.2)
    inputs[0][0, 0, 0, :2] = inputs[0][0, 0, 1, 1] = 5.0  # (a maximum three times in one window: the first counts)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(pools_interpolation_and_chunks), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), pools_interpolation_and_chunks(*inputs))


def unpooling_and_strided_views(pooled: torch.Tensor, indices: torch.Tensor, pooled_volume: torch.Tensor,
                                volume_indices: torch.Tensor, pooled_line: torch.Tensor, line_indices: torch.Tensor,
                                flat: torch.Tensor):
    F = torch.nn.functional
    grid = torch.gradient(flat.reshape(3, 4), spacing=0.5, edge_order=2)
    return (F.max_unpool2d(pooled, indices, 2), F.max_unpool3d(pooled_volume, volume_indices, 2),
            F.max_unpool1d(pooled_line, line_indices, 3, 2, output_size=[6]), torch.as_strided(flat, (3, 2), (1, 3), 2),
            grid[0], grid[1], torch.gradient(flat, dim=0)[0])


def test_max_unpool_as_strided_and_gradient_on_iree():
    """max_unpool as a one-hot gather (1d through 2d, as F.max_unpool1d calls it; of repeated positions the last
    value, as ATen's loop writes), as_strided of a program's input nothing writes, as a gather from its storage, and
    torch.gradient's differences of first and second order at the ends."""
    torch.manual_seed(0)
    pooled, indices = torch.nn.functional.max_pool2d(torch.randn(2, 4, 6), 2, return_indices=True)
    indices[0, 0, 0] = indices[0, 0, 1]
    inputs = (pooled, indices, *torch.nn.functional.max_pool3d(torch.randn(1, 2, 4, 4, 2), 2, return_indices=True),
              *torch.nn.functional.max_pool1d(torch.randn(4, 6), 3, 2, return_indices=True), torch.randn(12))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(unpooling_and_strided_views), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), unpooling_and_strided_views(*inputs))


def volume_sampling(volume: torch.Tensor, grid: torch.Tensor):
    f = torch.nn.functional
    return (torch.grid_sampler_3d(volume, grid, 0, 0, False), torch.grid_sampler_3d(volume, grid, 1, 1, True),
            f.grid_sample(volume, grid, align_corners=True), torch.grid_sampler_3d(volume, grid, 0, 1, False),
            f.grid_sample(volume, grid, mode="nearest", align_corners=False))


def test_grid_sampling_of_volumes_on_iree():
    """Trilinear and nearest sampling of a 3-D input (grid_sampler_3d is not in the torch dialect), zeros and border
    padding, grid points outside the input, with and without align_corners."""
    torch.manual_seed(0)
    inputs = (torch.randn(2, 3, 4, 5, 6), torch.rand(2, 3, 2, 4, 3) * 2.4 - 1.2)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(volume_sampling), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), volume_sampling(*inputs))


def order_statistics(x: torch.Tensor, v: torch.Tensor, q: torch.Tensor, lengths: torch.Tensor,
                     offsets: torch.Tensor):
    return (torch.quantile(x, 0.3, dim=1, keepdim=True), torch.quantile(x, q, dim=0),
            torch.nanquantile(x, q, dim=-1, interpolation="nearest"), torch.quantile(v, q, interpolation="lower"),
            torch.nanquantile(v, 0.75, interpolation="midpoint"), torch.quantile(x, 0.5, interpolation="higher"),
            torch.nanquantile(x, q, dim=1, keepdim=True), torch.nanmedian(v),
            torch.segment_reduce(v, "max", lengths=lengths), torch.segment_reduce(v, "min", lengths=lengths, initial=1),
            torch.segment_reduce(v, "mean", lengths=lengths),
            torch.segment_reduce(v, "mean", offsets=offsets, initial=1.0),
            torch.segment_reduce(v, "prod", offsets=offsets, initial=2),
            torch.segment_reduce(x.t(), "sum", lengths=lengths[1:]))


def test_quantiles_and_segment_reductions_with_nans_on_iree():
    """quantile and nanquantile (order_statistics.py) over rows with a NaN and of NaNs only, every interpolation
    (the backends' sort leaves NaNs where they stand, so the decompositions sort them last themselves); segment
    reductions given lengths or offsets, with an empty segment, a NaN and an initial value."""
    torch.manual_seed(0)
    x, v = torch.randn(4, 5), torch.randn(7)
    x[1, 2], x[2], v[3] = float("nan"), float("nan"), float("nan")
    inputs = (x, v, torch.tensor([0.0, 0.25, 0.5, 1.0]), torch.tensor([2, 0, 2, 3]), torch.tensor([0, 2, 2, 5, 7]))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(order_statistics), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), order_statistics(*inputs))


def kth_values(x: torch.Tensor, special: torch.Tensor, counts: torch.Tensor, scalar: torch.Tensor):
    return (torch.kthvalue(x, 2), torch.kthvalue(x, 5, 0, True), torch.kthvalue(x, 1, 1), torch.kthvalue(special, 4),
            torch.kthvalue(special, 3), torch.kthvalue(special, 5), torch.kthvalue(special, 1, 0),
            torch.kthvalue(counts, 2), torch.kthvalue(scalar, 1), torch.kthvalue(scalar, 1, 0, True))


def test_kthvalue_on_iree():
    """The k-th smallest along each dimension, kept or not; NaNs the largest (a NaN's position when the k-th place
    is one), infinities, integers, a 0-d tensor. (torch-mlir's own lowering is a topk that IREE rejects.)"""
    torch.manual_seed(0)
    special = torch.tensor([[1.0, float("nan"), float("inf"), float("nan"), 0.0], [3.0, -1.0, 2.5, 2.0, float("-inf")]])
    inputs = (torch.randn(5, 5, 5), special, torch.tensor([[4, 1, 3], [2, 7, 0]]), torch.tensor(3.0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(kth_values), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), kth_values(*inputs))


def indices_from_data(x: torch.Tensor, indices: torch.Tensor):
    return (torch.tensor_split(x, indices, 1), torch.tensor_split(x, indices, -1),
            torch.nonzero_static(torch.relu(x[0]), size=20), torch.nonzero_static(indices, size=2, fill_value=-7),
            torch.empty_permuted((2, 3, 4), (2, 0, 1)))


def test_tensor_split_at_index_tensors_nonzero_static_and_empty_permuted_on_iree():
    """tensor_split at the values of an index tensor (pieces whose sizes are known at run time only: one
    compilation, other indices, negative and decreasing ones too), nonzero_static (rows past the count of nonzeros
    filled), and empty_permuted's logical shape."""
    x = torch.randn(5, 6, 5)
    run = iree.compile(tsjit.mlir.compile(tsjit.script(indices_from_data), [x, torch.tensor([1, 4, 3])],
                                          output_type="linalg-on-tensors"))
    for indices in (torch.tensor([1, 4, 3]), torch.tensor([-2, 0, 5])):
        got, expected = run(x, indices), indices_from_data(x, indices)
        assert_close(got[:4], expected[:4])
        assert (got[4].dtype, got[4].shape) == (expected[4].dtype, expected[4].shape)


def splits_at_index_lists(x: torch.Tensor, row: torch.Tensor):
    return (torch.tensor_split(x, [1, 4, 3], 1), torch.tensor_split(x, [-2, 0, 9], -1), torch.dsplit(x, [1, 2, 3]),
            torch.hsplit(x, [2]), torch.vsplit(x, [0, 3]), torch.hsplit(row, [2, 4]))


def test_splits_at_index_lists_on_iree():
    """tensor_split at a list of indices and hsplit/vsplit/dsplit at one (op_db's dsplit): the pieces between
    the indices, along the dimension each names (hsplit of a 1-d tensor along 0), with negative, decreasing and
    out-of-range indices giving what ATen's slices give."""
    inputs = (torch.randn(5, 6, 5), torch.randn(6))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(splits_at_index_lists), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), splits_at_index_lists(*inputs))


def nonzeros(scalar: torch.Tensor, x: torch.Tensor):
    return torch.nonzero(scalar, as_tuple=False), torch.nonzero(x)


def test_nonzero_of_a_0d_tensor_on_iree():
    """nonzero of a 0-d tensor (op_db's sample; torch-mlir's lowering of it kills the process) is a row without
    columns or none, from one compilation; of other ranks torch-mlir's own."""
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    run = iree.compile(tsjit.mlir.compile(tsjit.script(nonzeros), [torch.tensor(3.0), x],
                                          output_type="linalg-on-tensors"))
    for scalar in (torch.tensor(3.0), torch.tensor(0.0)):
        assert_close(run(scalar, x), nonzeros(scalar, x))


def polygammas(x: torch.Tensor):
    return torch.polygamma(1, x), torch.polygamma(2, x), torch.special.polygamma(3, x), torch.polygamma(1, -x)


def test_polygamma_on_iree():
    """polygamma of order 1 to 3 (op_db's polygamma and special.polygamma: not in the torch dialect) by the Hurwitz
    zeta function, also of negative arguments, whose negation refinement types only after the first
    decompositions (decomposed in turn: the zeta a decomposition brings is decomposed too)."""
    x = torch.rand(4, 5) * 5 + 0.1
    run = iree.compile(tsjit.mlir.compile(tsjit.script(polygammas), [x], output_type="linalg-on-tensors"))
    assert_close(run(x), polygammas(x))


def embedding_bags(weight: torch.Tensor, indices: torch.Tensor, offsets: torch.Tensor, weights: torch.Tensor,
                   rows: torch.Tensor):
    f = torch.nn.functional
    return (f.embedding_bag(indices, weight, offsets, mode="sum", per_sample_weights=weights),
            f.embedding_bag(indices, weight, offsets, mode="max", padding_idx=1),
            f.embedding_bag(rows, weight, mode="mean", padding_idx=2),
            f.embedding_bag(indices, weight, torch.cat([offsets, torch.tensor([8])]), include_last_offset=True),
            torch.embedding_bag(weight, indices, offsets, False, 1, False, None, False, None),
            torch.embedding_bag(weight, indices, offsets, False, 2, False, None, False, None))


def test_embedding_bag_on_iree():
    """embedding_bag (linalg lowers only sums, whose offset2bag it types wrongly: op_db's embedding_bag): sums
    with per-sample weights, means and maxima, with an empty bag, padding indices, 2-d indices and a last offset
    that ends the last bag; the auxiliary results of means and maxima as eager's."""
    inputs = (torch.randn(10, 5), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 3, 3, 6]), torch.rand(8),
              torch.tensor([[1, 2, 2], [2, 2, 2], [0, 9, 2]]))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(embedding_bags), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), embedding_bags(*inputs))


def histograms(x: torch.Tensor, points: torch.Tensor, weight: torch.Tensor, scalar: torch.Tensor):
    return (torch.histogram(x, bins=4), torch.histogram(x, bins=3, range=(-1.0, 1.0), weight=weight, density=True),
            torch.histogramdd(points, bins=[2, 3]), torch.histogramdd(points, bins=2, range=[-1.0, 1.0, 0.0, 2.0],
                                                                      density=True), torch.histogram(scalar, bins=1))


def test_histograms_on_iree():
    """histogram and histogramdd: bounds from the data (widened when they are equal, one point) or given, points
    on edges and outside the bounds, weights and densities."""
    torch.manual_seed(0)
    inputs = (torch.tensor([1.0, 2.0, 2.0, 3.0, 5.0, -0.5, 0.25]), torch.randn(6, 2), torch.rand(7), torch.tensor(2.0))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(histograms), list(inputs), output_type="linalg-on-tensors"))
    assert_close(run(*inputs), tuple(tuple(result) for result in histograms(*inputs)))


def masked_indexing(x: torch.Tensor, mask: torch.Tensor, indices: list[torch.Tensor | None], values: torch.Tensor):
    return (torch._unsafe_masked_index(x, mask, indices, -8.5),
            torch._unsafe_masked_index_put_accumulate(x, mask, indices, values))


def test_unsafe_masked_index_and_put_with_an_index_list_argument_on_iree():
    """_unsafe_masked_index and its accumulating put (indices out of bounds where the mask is False), the indices
    a `Tensor?[]` argument (flattened into tensor arguments at the function boundary)."""
    torch.manual_seed(0)
    mask = torch.rand(10, 10) > 0.5
    rows, columns = torch.randint(0, 5, (10, 1)), torch.randint(0, 5, (1, 10))
    rows[torch.logical_not(mask.any(1))] = 7
    inputs = (torch.randn(5, 5), mask, [rows, columns], torch.randn(10, 10))
    run = iree.compile(tsjit.mlir.compile(tsjit.script(masked_indexing), list(inputs),
                                          output_type="linalg-on-tensors"))
    assert_close(run(*inputs), masked_indexing(*inputs))


def diagonal_embeddings(v: torch.Tensor, rows: torch.Tensor):
    return (torch.diag(v), torch.diag(v, -2), torch.diag_embed(rows, 1), torch.diag_embed(rows, -1, 0, 2),
            torch.diagflat(rows, 2))


def test_diag_embed_and_diag_of_a_vector_on_stablehlo():
    """StableHLO lowers no diag_embed (nor diag of a vector, which torch-mlir decomposes into it); the
    decomposition calls movedim, itself decomposed (a decomposition's operators are decomposed in turn)."""
    inputs = (torch.randn(4), torch.randn(2, 3))
    for backend in ("stablehlo", "linalg-on-tensors"):
        run = iree.compile(tsjit.mlir.compile(tsjit.script(diagonal_embeddings), list(inputs), output_type=backend))
        assert_close(run(*inputs), diagonal_embeddings(*inputs))


def logit_losses(x: torch.Tensor, target: torch.Tensor):
    return (torch.nn.functional.binary_cross_entropy_with_logits(x, torch.ones_like(x)),
            torch.nn.functional.binary_cross_entropy_with_logits(x, target, reduction="sum"),
            torch.nn.functional.binary_cross_entropy_with_logits(x, target, reduction="none"))


def test_binary_cross_entropy_with_logits_without_pos_weight_on_iree():
    """torch-mlir's own decomposition folds `1 - target` of a ones_like target into a literal of 2**64 (e2e's
    functional_more_losses gave wrong values on every backend): tsjit decomposes it with or without pos_weight."""
    inputs = (torch.randn(3, 4), torch.rand(3, 4))
    for backend in ("linalg-on-tensors", "tosa", "stablehlo"):
        run = iree.compile(tsjit.mlir.compile(tsjit.script(logit_losses), list(inputs), output_type=backend))
        assert_close(run(*inputs), logit_losses(*inputs))
