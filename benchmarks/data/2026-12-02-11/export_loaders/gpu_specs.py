"""GPU specs for KernelBench's prompts: linkroof export --format kernelbench, profile 20261130-193947-a5e8a4.
Measured figures say so and name their clock state; spec figures are the data sheet's, dense."""

GPU_SPEC_INFO = {'H200x2-linkroof': {'GPU Architecture': 'Hopper',
                     'GPU Memory': '150.8 GB (NVML)',
                     'Memory Bandwidth': '4510.3 GB/s (measured, clock not sampled); spec 4800.0 GB/s',
                     'FP8 Tensor Core TFLOPS': 'not measured; spec 1979 dense',
                     'BFLOAT16 Tensor Core TFLOPS': '851 dense (measured, clock not sampled); spec 990 dense',
                     'FP16 Tensor Core TFLOPS': '814 dense (measured, clock not sampled); spec 990 dense',
                     'TF32 Tensor Core TFLOPS': '434 dense (measured, clock not sampled); spec 494 dense',
                     'FP32 TFLOPS': '65 dense (measured, clock not sampled); spec 67 dense',
                     'FP64 TFLOPS': '65 dense (measured, clock not sampled); spec 67 dense',
                     'INT8 Tensor Core TOPS': 'not measured; spec 1979 dense',
                     'NVLink bandwidth per GPU, one direction': 'spec 450.0 GB/s; measured ce 396.3 GB/s, sm '
                                                                '376.2 GB/s, tma 376.1 GB/s, nccl 370.7 '
                                                                'GB/s, tma_red 333.3 GB/s, red 331.8 GB/s '
                                                                '[clock not sampled]',
                     'host link bandwidth per GPU, one direction': 'spec 63.0 GB/s; measured ce 55.5 GB/s '
                                                                   '[clock not sampled]',
                     "SM blocks to reach 90 % of a mechanism's peak": 'red p2p_write 16, sm p2p_read 8, tma '
                                                                      'p2p_read 16, tma_red p2p_write 8',
                     'NCCL all_gather nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.374/5.21/49.7/197/307 '
                                                                                    'GB/s',
                     'NCCL all_reduce nccl bf16 bandwidth at 4K/64K/1M/16M/256M B': '0.648/9.11/74.8/247/323 '
                                                                                    'GB/s',
                     'NCCL all_reduce nccl fp16 bandwidth at 4K/64K/1M/16M/256M B': '0.656/9.26/75.8/247/323 '
                                                                                    'GB/s',
                     'NCCL all_reduce nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.656/9.31/79.4/245/311 '
                                                                                    'GB/s',
                     'NCCL all_to_all nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.32/4.16/41.6/239/347 '
                                                                                    'GB/s',
                     'NCCL broadcast nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.796/10.7/91.1/265/356 '
                                                                                   'GB/s',
                     'NCCL reduce nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.859/12.2/98.3/297/365 '
                                                                                'GB/s',
                     'NCCL reduce_scatter nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.374/5.33/53.7/166/238 '
                                                                                        'GB/s',
                     'NCCL sendrecv nccl fp32 bandwidth at 4K/64K/1M/16M/256M B': '0.599/8.29/71.1/283/355 '
                                                                                  'GB/s',
                     'Launch': 'graph 717 ns, cuda 1590 ns, cupy 5390 ns, nccl 12.5 us; sync: cta 164 ns, '
                               'grid 998 ns, gpu 728 ns',
                     'NVLink p2p_read ce bandwidth at 4K/64K/1M/16M/256M B': '-/-/63.1/292/387 GB/s; half '
                                                                             'peak from 8 MiB',
                     'NVLink p2p_read ce (ungated) bandwidth at 4K/64K/1M/16M/256M B': '0.622/10.6/-/-/- '
                                                                                       'GB/s; half peak from '
                                                                                       '64 KiB',
                     'NVLink p2p_read sm bandwidth at 4K/64K/1M/16M/256M B': '4.29/67.1/328/316/371 GB/s; '
                                                                             'half peak from 256 KiB',
                     'NVLink p2p_read tma bandwidth at 4K/64K/1M/16M/256M B': '10.6/162/339/322/371 GB/s; '
                                                                              'half peak from 128 KiB',
                     'NVLink p2p_write ce bandwidth at 4K/64K/1M/16M/256M B': '1.74/25.8/186/344/394 GB/s; '
                                                                              'half peak from 2 MiB',
                     'NVLink p2p_write red bandwidth at 4K/64K/1M/16M/256M B': '16.7/181/299/302/330 GB/s; '
                                                                               'half peak from 256 KiB',
                     'NVLink p2p_write sm bandwidth at 4K/64K/1M/16M/256M B': '17/193/346/328/367 GB/s; half '
                                                                              'peak from 64 KiB',
                     'NVLink p2p_write tma bandwidth at 4K/64K/1M/16M/256M B': '10.6/165/342/327/369 GB/s; '
                                                                               'half peak from 128 KiB',
                     'NVLink p2p_write tma_red bandwidth at 4K/64K/1M/16M/256M B': '10/145/291/299/331 GB/s; '
                                                                                   'half peak from 256 KiB',
                     'Number of SMs': '132 (NVML)'}}

GPU_DEFINITIONS = {'measured': 'timed on this machine by linkroof with CUDA events after warm-up, over repetitions, the data '
             'verified; the clock state it was taken in is given (burst: at the boost clock; sustained: held '
             "below it, as under a long run's power cap)",
 'spec': "the vendor's data sheet (dense figures; never reached in practice)",
 'busbw': "NCCL's bus bandwidth (nccl-tests' convention): comparable across collectives and rank counts",
 'half peak from': 'the smallest message size at which a mechanism gives half its best bandwidth: below it, '
                   'per-message latency dominates',
 'copy engine / SM / TMA': "three ways to move data between GPUs: cudaMemcpy's DMA engines (no SMs used), "
                           "loads and stores from SMs, and the Tensor Memory Accelerator's bulk copies"}

GPU_BEST_PRACTICES = ['NVLink p2p_read ce reaches half its peak at 8 MiB messages (measured): batch smaller transfers.',
 'NVLink p2p_write ce reaches half its peak at 2 MiB messages (measured): batch smaller transfers.',
 'NVLink p2p_write red reaches half its peak at 256 KiB messages (measured): batch smaller transfers.',
 'NVLink p2p_read sm reaches half its peak at 256 KiB messages (measured): batch smaller transfers.',
 'NVLink p2p_write sm reaches half its peak at 64 KiB messages (measured): batch smaller transfers.',
 'NVLink p2p_read tma reaches half its peak at 128 KiB messages (measured): batch smaller transfers.',
 'NVLink p2p_write tma reaches half its peak at 128 KiB messages (measured): batch smaller transfers.',
 'NVLink p2p_write tma_red reaches half its peak at 256 KiB messages (measured): batch smaller transfers.']
