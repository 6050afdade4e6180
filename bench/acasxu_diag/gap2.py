import sys, torch
from acas import *; from crown import *
torch.set_num_threads(1)
net, prop = sys.argv[1], sys.argv[2]
fwd,sub,layers=load(net); lo,hi=read_box(prop)
C=torch.zeros(4,5,dtype=torch.float64); C[:,0]=-1
for k in range(4): C[k,k+1]=1
rhs=torch.zeros(4,dtype=torch.float64)
torch.manual_seed(2)
for rel_w in [1/4,1/8,1/16,1/32,1/64]:
    B=400; w=(hi-lo)*rel_w
    xl=lo+(hi-lo-w)*torch.rand(B,5); xu=xl+w
    with torch.no_grad():
        s=xl.unsqueeze(1)+w*torch.rand(B,1000,5)
        y=fwd(s.reshape(-1,5)).reshape(B,1000,5); tm=(y[...,1:]-y[...,:1]).max(-1).values.min(1).values
        bounds,rel=layer_bounds(layers,xl,xu); lb,A=final(layers,C,rhs,xl,xu,bounds,rel); eg,_=conj_eg(lb,A,xl,xu)
    v=tm<0.0035
    unst=torch.stack([r[3].sum(1) for r in rel],1).double()
    print(f"w=1/{int(1/rel_w)}: valley boxes {int(v.sum())}/{B}; verified valley {int((eg[v]>0).sum())}, non-valley {int((eg[~v]>0).sum())}/{int((~v).sum())}; valley unstable/layer {unst[v].mean(0).numpy().round(1)}; valley median gap {float((tm-eg)[v].median()):.5f} q90 {float((tm-eg)[v].quantile(0.9)):.5f}")
