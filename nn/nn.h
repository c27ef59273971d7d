// The whole C++ Gluon-style API in one include: Parameter, Block,
// HybridBlock, SymbolBlock, the layers (recurrent ones included), losses, optimizers and Trainer.
//
//   #include "nn/nn.h"
//   auto net = std::make_shared<mx::nn::HybridSequential>();
//   net->Add(std::make_shared<mx::nn::Dense>(10));
//   net->Initialize();
//   mx::NDArray y = (*net)(x);
#ifndef MXCORE_NN_NN_H_
#define MXCORE_NN_NN_H_

#include "nn/block.h"
#include "nn/hybrid_block.h"
#include "nn/initializer.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/npz_file.h"
#include "nn/optimizer.h"
#include "nn/parameter.h"
#include "nn/params_file.h"
#include "nn/rnn_layers.h"
#include "nn/sequential.h"
#include "nn/symbol_block.h"
#include "nn/trainer.h"

#endif  // MXCORE_NN_NN_H_
