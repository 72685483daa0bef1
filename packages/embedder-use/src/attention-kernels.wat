;; Batched matrix products for the attention of use-lite-512-v1 on TensorFlow.js's wasm backend.
;; TensorFlow.js runs batched products (one matrix pair per sentence and head) on a scalar loop; these
;; use 128-bit SIMD. They read and write TensorFlow.js's own memory (imported), so nothing is copied.
;; Every offset and size is checked by the caller (attention-kernels.ts) against the tensors' shapes.
;; Rebuild the embedded binary after a change: pnpm --filter @engram/embedder-use kernels
(module
  (import "env" "memory" (memory 1))
  ;; bmm_nt: C[b,i,j] = sum_k A[b,i,k] * B[b,j,k]   (k a multiple of 4; offsets in bytes)
  ;; Four columns of C at a time: one row of A against four rows of B, four-lane partial sums.
  (func (export "bmm_nt") (param $a i32) (param $b i32) (param $c i32) (param $batch i32) (param $m i32) (param $n i32) (param $k i32)
    (local $kb i32) (local $bi i32) (local $i i32) (local $j i32) (local $kk i32)
    (local $abase i32) (local $bbase i32) (local $cbase i32) (local $arow i32)
    (local $b0 i32) (local $b1 i32) (local $b2 i32) (local $b3 i32) (local $cout i32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128) (local $va v128)
    (local.set $kb (i32.shl (local.get $k) (i32.const 2)))
    (local.set $bi (i32.const 0))
    (block $bdone (loop $bloop
      (br_if $bdone (i32.ge_u (local.get $bi) (local.get $batch)))
      (local.set $abase (i32.add (local.get $a) (i32.mul (local.get $bi) (i32.mul (local.get $m) (local.get $kb)))))
      (local.set $bbase (i32.add (local.get $b) (i32.mul (local.get $bi) (i32.mul (local.get $n) (local.get $kb)))))
      (local.set $cbase (i32.add (local.get $c) (i32.shl (i32.mul (local.get $bi) (i32.mul (local.get $m) (local.get $n))) (i32.const 2))))
      (local.set $i (i32.const 0))
      (block $idone (loop $iloop
        (br_if $idone (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $arow (i32.add (local.get $abase) (i32.mul (local.get $i) (local.get $kb))))
        (local.set $cout (i32.add (local.get $cbase) (i32.shl (i32.mul (local.get $i) (local.get $n)) (i32.const 2))))
        (local.set $j (i32.const 0))
        (block $jdone (loop $jloop
          (br_if $jdone (i32.gt_u (i32.add (local.get $j) (i32.const 4)) (local.get $n)))
          (local.set $b0 (i32.add (local.get $bbase) (i32.mul (local.get $j) (local.get $kb))))
          (local.set $b1 (i32.add (local.get $b0) (local.get $kb)))
          (local.set $b2 (i32.add (local.get $b1) (local.get $kb)))
          (local.set $b3 (i32.add (local.get $b2) (local.get $kb)))
          (local.set $s0 (v128.const i32x4 0 0 0 0))
          (local.set $s1 (v128.const i32x4 0 0 0 0))
          (local.set $s2 (v128.const i32x4 0 0 0 0))
          (local.set $s3 (v128.const i32x4 0 0 0 0))
          (local.set $kk (i32.const 0))
          (block $kdone (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $kk) (local.get $kb)))
            (local.set $va (v128.load (i32.add (local.get $arow) (local.get $kk))))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (local.get $va) (v128.load (i32.add (local.get $b0) (local.get $kk))))))
            (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (local.get $va) (v128.load (i32.add (local.get $b1) (local.get $kk))))))
            (local.set $s2 (f32x4.add (local.get $s2) (f32x4.mul (local.get $va) (v128.load (i32.add (local.get $b2) (local.get $kk))))))
            (local.set $s3 (f32x4.add (local.get $s3) (f32x4.mul (local.get $va) (v128.load (i32.add (local.get $b3) (local.get $kk))))))
            (local.set $kk (i32.add (local.get $kk) (i32.const 16)))
            (br $kloop)))
          ;; transpose-add: X = [a0+a2, b0+b2, a1+a3, b1+b3], Y likewise for s2, s3; then [a, b, c, d]
          (local.set $s0
            (f32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $s0) (local.get $s1))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $s0) (local.get $s1))))
          (local.set $s1
            (f32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $s2) (local.get $s3))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $s2) (local.get $s3))))
          (v128.store (i32.add (local.get $cout) (i32.shl (local.get $j) (i32.const 2)))
            (f32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $s0) (local.get $s1))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $s0) (local.get $s1))))
          (local.set $j (i32.add (local.get $j) (i32.const 4)))
          (br $jloop)))
        ;; remaining columns one at a time
        (block $tdone (loop $tloop
          (br_if $tdone (i32.ge_u (local.get $j) (local.get $n)))
          (local.set $b0 (i32.add (local.get $bbase) (i32.mul (local.get $j) (local.get $kb))))
          (local.set $s0 (v128.const i32x4 0 0 0 0))
          (local.set $kk (i32.const 0))
          (block $k2done (loop $k2loop
            (br_if $k2done (i32.ge_u (local.get $kk) (local.get $kb)))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (v128.load (i32.add (local.get $arow) (local.get $kk))) (v128.load (i32.add (local.get $b0) (local.get $kk))))))
            (local.set $kk (i32.add (local.get $kk) (i32.const 16)))
            (br $k2loop)))
          (f32.store (i32.add (local.get $cout) (i32.shl (local.get $j) (i32.const 2)))
            (f32.add
              (f32.add (f32x4.extract_lane 0 (local.get $s0)) (f32x4.extract_lane 1 (local.get $s0)))
              (f32.add (f32x4.extract_lane 2 (local.get $s0)) (f32x4.extract_lane 3 (local.get $s0)))))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br $tloop)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $iloop)))
      (local.set $bi (i32.add (local.get $bi) (i32.const 1)))
      (br $bloop)))
  )
  ;; bmm_nn: C[b,i,j] = sum_k A[b,i,k] * B[b,k,j]   (n a multiple of 4; offsets in bytes)
  ;; Sixteen columns of one row of C stay in four registers while k runs; then four at a time.
  (func (export "bmm_nn") (param $a i32) (param $b i32) (param $c i32) (param $batch i32) (param $m i32) (param $n i32) (param $k i32)
    (local $nb i32) (local $kb i32) (local $bi i32) (local $i i32) (local $j i32) (local $kk i32)
    (local $abase i32) (local $bbase i32) (local $cbase i32) (local $arow i32) (local $crow i32) (local $bp i32)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128) (local $va v128)
    (local.set $nb (i32.shl (local.get $n) (i32.const 2)))
    (local.set $kb (i32.shl (local.get $k) (i32.const 2)))
    (local.set $bi (i32.const 0))
    (block $bdone (loop $bloop
      (br_if $bdone (i32.ge_u (local.get $bi) (local.get $batch)))
      (local.set $abase (i32.add (local.get $a) (i32.mul (local.get $bi) (i32.mul (local.get $m) (local.get $kb)))))
      (local.set $bbase (i32.add (local.get $b) (i32.mul (local.get $bi) (i32.mul (local.get $k) (local.get $nb)))))
      (local.set $cbase (i32.add (local.get $c) (i32.mul (local.get $bi) (i32.mul (local.get $m) (local.get $nb)))))
      (local.set $i (i32.const 0))
      (block $idone (loop $iloop
        (br_if $idone (i32.ge_u (local.get $i) (local.get $m)))
        (local.set $arow (i32.add (local.get $abase) (i32.mul (local.get $i) (local.get $kb))))
        (local.set $crow (i32.add (local.get $cbase) (i32.mul (local.get $i) (local.get $nb))))
        (local.set $j (i32.const 0))
        ;; sixteen columns at a time
        (block $jdone (loop $jloop
          (br_if $jdone (i32.gt_u (i32.add (local.get $j) (i32.const 64)) (local.get $nb)))
          (local.set $s0 (v128.const i32x4 0 0 0 0))
          (local.set $s1 (v128.const i32x4 0 0 0 0))
          (local.set $s2 (v128.const i32x4 0 0 0 0))
          (local.set $s3 (v128.const i32x4 0 0 0 0))
          (local.set $bp (i32.add (local.get $bbase) (local.get $j)))
          (local.set $kk (i32.const 0))
          (block $kdone (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $kk) (local.get $kb)))
            (local.set $va (f32x4.splat (f32.load (i32.add (local.get $arow) (local.get $kk)))))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (local.get $va) (v128.load offset=0 (local.get $bp)))))
            (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (local.get $va) (v128.load offset=16 (local.get $bp)))))
            (local.set $s2 (f32x4.add (local.get $s2) (f32x4.mul (local.get $va) (v128.load offset=32 (local.get $bp)))))
            (local.set $s3 (f32x4.add (local.get $s3) (f32x4.mul (local.get $va) (v128.load offset=48 (local.get $bp)))))
            (local.set $bp (i32.add (local.get $bp) (local.get $nb)))
            (local.set $kk (i32.add (local.get $kk) (i32.const 4)))
            (br $kloop)))
          (v128.store offset=0 (i32.add (local.get $crow) (local.get $j)) (local.get $s0))
          (v128.store offset=16 (i32.add (local.get $crow) (local.get $j)) (local.get $s1))
          (v128.store offset=32 (i32.add (local.get $crow) (local.get $j)) (local.get $s2))
          (v128.store offset=48 (i32.add (local.get $crow) (local.get $j)) (local.get $s3))
          (local.set $j (i32.add (local.get $j) (i32.const 64)))
          (br $jloop)))
        ;; then four at a time
        (block $j4done (loop $j4loop
          (br_if $j4done (i32.ge_u (local.get $j) (local.get $nb)))
          (local.set $s0 (v128.const i32x4 0 0 0 0))
          (local.set $bp (i32.add (local.get $bbase) (local.get $j)))
          (local.set $kk (i32.const 0))
          (block $k4done (loop $k4loop
            (br_if $k4done (i32.ge_u (local.get $kk) (local.get $kb)))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (f32x4.splat (f32.load (i32.add (local.get $arow) (local.get $kk)))) (v128.load (local.get $bp)))))
            (local.set $bp (i32.add (local.get $bp) (local.get $nb)))
            (local.set $kk (i32.add (local.get $kk) (i32.const 4)))
            (br $k4loop)))
          (v128.store (i32.add (local.get $crow) (local.get $j)) (local.get $s0))
          (local.set $j (i32.add (local.get $j) (i32.const 16)))
          (br $j4loop)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $iloop)))
      (local.set $bi (i32.add (local.get $bi) (i32.const 1)))
      (br $bloop)))
  )
)
